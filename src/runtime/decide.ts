import type { Clock } from '../clock/clock.js';
import type { CompiledRule } from './bot.js';
import type { BotState, RunProgress } from './state.js';
import type { ConditionContext, ConditionResult } from './types.js';

export type Decision = NonNullable<RunProgress['decision']> & { message?: string };

/**
 * Whether a rule runs for an event, and if not why: `disabled`, `condition_false` (with each
 * condition's result) or `cooldown`. The cooldown is looked at last, so "cooldown" means the
 * rule would otherwise have run.
 *
 * @example const d = await decide(rule, ctx, state, clock); if (!d.run) console.log(d.reason);
 */
export async function decide(rule: CompiledRule, ctx: ConditionContext, state: BotState, clock: Clock): Promise<Decision> {
  if (!rule.enabled) return { run: false, reason: 'disabled', message: 'the rule has enabled: false' };
  let conditions: ConditionResult | undefined;
  if (rule.condition) {
    conditions = await rule.condition(ctx);
    if (!conditions.ok) return { run: false, reason: 'condition_false', message: 'a condition did not hold', conditions };
  }
  if (rule.cooldownMs) {
    const last = state.meta().last_run[rule.id];
    const left = last === undefined ? 0 : last + rule.cooldownMs - clock.now();
    if (left > 0) return { run: false, reason: 'cooldown', message: `cooldown: ${Math.ceil(left / 1000)} s left`, conditions };
  }
  return { run: true, conditions };
}
