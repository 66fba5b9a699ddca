import type { Clock } from '../../clock/clock.js';
import type { CompiledRule } from '../define/bot.js';
import type { BotState, RunProgress } from '../state/bot-state.js';
import type { ConditionRunContext, ConditionResult } from '../contract/types.js';
import { limitKey, recentRuns, scopeWords } from './run-limits.js';

export type Decision = NonNullable<RunProgress['decision']> & { message?: string };

/**
 * Whether a rule runs for an event, and if not why: `disabled`, `condition_false` (with each
 * condition's result), `cooldown` or `throttled` (per rule, sender or conversation). Those two
 * are looked at last, so they mean the rule would otherwise have run.
 *
 * @example const d = await decide(rule, ctx, state, clock); if (!d.run) console.log(d.reason);
 */
export async function decide(
  rule: CompiledRule,
  ctx: ConditionRunContext,
  state: BotState,
  clock: Clock,
): Promise<Decision> {
  if (!rule.enabled) return { run: false, reason: 'disabled', message: 'the rule has enabled: false' };
  let conditions: ConditionResult | undefined;
  if (rule.condition) {
    conditions = await rule.condition(ctx);
    if (!conditions.ok)
      return { run: false, reason: 'condition_false', message: 'a condition did not hold', conditions };
  }
  const actor = ctx.trigger.actor?.(ctx.scope.event, ctx.scope.me);
  if (rule.cooldownMs) {
    const key = limitKey(rule.id, rule.cooldownPer, ctx.scope.event, actor);
    const last = state.meta().last_run[key];
    const left = last === undefined ? 0 : last + rule.cooldownMs - clock.now();
    if (left > 0)
      return {
        run: false,
        reason: 'cooldown',
        message: `cooldown ${scopeWords(rule.cooldownPer, key)}: ${Math.ceil(left / 1000)} s left`,
        conditions,
      };
  }
  if (rule.throttle) {
    const t = rule.throttle;
    const key = limitKey(rule.id, t.per, ctx.scope.event, actor);
    const recent = recentRuns(state.meta().runs, key, clock.now(), t.withinMs);
    if (recent.length >= t.maxRuns) {
      const again = Math.ceil((recent[0]! + t.withinMs - clock.now()) / 1000);
      return {
        run: false,
        reason: 'throttled',
        message:
          `throttle ${scopeWords(t.per, key)}: ${recent.length} runs in ` +
          `${Math.round(t.withinMs / 1000)} s (max_runs ${t.maxRuns}); again in ` +
          `${again} s`,
        conditions,
      };
    }
  }
  return { run: true, conditions };
}
