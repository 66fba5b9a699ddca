import type { Logger } from 'pino';
import type { Clock } from '../../clock/clock.js';
import type { Scheduler } from '../../clock/scheduler.js';
import type { BotEvent } from '../contract/types.js';
import type { CompiledBot } from '../define/bot.js';
import type { BotState } from '../state/bot-state.js';

/** What setting up a bot's triggers needs of its runner. */
export interface TriggerSetup {
  bot: CompiledBot;
  state: BotState;
  clock: Clock;
  scheduler: Scheduler;
  log: Logger;
  /** Queues an event the trigger made (`fired`: the time a schedule fired for, per rule). */
  emit(e: Omit<BotEvent, 'at'>, fired?: { rule: string; at: number }): Promise<void>;
  /** Queues an event pushed from outside to the trigger `trigger`; false for a duplicate. */
  push(trigger: string, e: Omit<BotEvent, 'at'>): Promise<boolean>;
}

/**
 * Sets up the triggers of the enabled rules that have a setup (schedules, plugins' push
 * sources), and returns what undoes them. A rule's first start is the baseline of what its
 * trigger missed (a schedule's missed fires): it is recorded as fired now.
 */
export async function setUpTriggers(o: TriggerSetup): Promise<Array<() => void>> {
  const { bot, state, clock, log } = o;
  const offs: Array<() => void> = [];
  for (const rule of bot.rules.filter((r) => r.enabled)) {
    for (const t of rule.triggers) {
      if (!t.def.setup) continue;
      let lastFired = state.fired(rule.id);
      if (lastFired === undefined) await state.markFired(rule.id, (lastFired = clock.now()));
      const emit = (e: Omit<BotEvent, 'at'>, f?: { fired?: number }) =>
        o.emit(e, f?.fired === undefined ? undefined : { rule: rule.id, at: f.fired });
      const off = t.def.setup(
        {
          bot: bot.name,
          ruleId: rule.id,
          scheduler: o.scheduler,
          clock,
          emit,
          push: (e) => o.push(t.def.name, e),
          log,
          lastFired,
        },
        t.options,
      );
      if (off) offs.push(off);
    }
  }
  return offs;
}
