import type { CompiledRule } from '../define/bot.js';
import type { TriggerDef } from '../contract/types.js';
import type { InboxEntry, RunProgress, RunWrite } from '../state/bot-state.js';
import { startTrace, type Trace } from '../state/traces.js';
import { crashPoint } from './crash-points.js';
import { spendDate } from './run-context.js';
import type { Pending, RuleRun } from './runner-deps.js';

/** The trigger of a rule that an event's type names. */
export function triggerOf({ rule, entry }: { rule: CompiledRule; entry: InboxEntry }): TriggerDef {
  return rule.triggers.find((t) => t.def.name === entry.event.type)!.def;
}

/** A new trace of a run, at the bot clock's now. */
export function newTrace(run: RuleRun, resumed: boolean): Trace {
  const { self, limits } = run.runner;
  return startTrace({
    bot: self.bot,
    rule: run.rule.id,
    event: run.entry.event,
    who: triggerOf(run).actor?.(run.entry.event.payload, self.me),
    at: limits.clock.now(),
    resumed,
  });
}

/** What one write of a run carries: its progress, its pending changes, and whether the entry is done. */
interface RunWriteParts {
  run: RuleRun;
  progress: RunProgress;
  pending: Pending;
  /** Removes the entry from the inbox (its last run ended). */
  finish?: boolean;
}

/** The write of a run's progress with its pending changes (call `written` once it is durable). */
export function runWrite({ run, progress, pending, finish = false }: RunWriteParts): RunWrite {
  const { self, limits } = run.runner;
  const spend = pending.spend
    ? {
        date: spendDate(limits.clock),
        cents: pending.spend,
        max: pending.spend > 0 ? self.bot.limits.maxPerDay : undefined,
      }
    : undefined;
  return {
    entry: run.entry.id,
    rule: run.rule.id,
    progress,
    vars: pending.vars,
    spend,
    lastRun: pending.lastRun,
    throttled: pending.throttled,
    finish,
  };
}

/**
 * Writes the run's progress with its pending changes (and removes the entry when `finish`).
 * `until: 'commit'`: resolves once committed when the bot's store is ordered with the server's
 * commits (BotState.ordered): what the run does next commits after it and waits for the fsync.
 */
export async function flush(c: RunWriteParts, until: 'durable' | 'commit' = 'durable'): Promise<void> {
  await c.run.runner.writes.state.write(runWrite(c), { until });
  written(c.pending);
}

/** The pending changes went with a write. */
export function written(pending: Pending): void {
  pending.spend = 0;
  pending.vars = undefined;
  pending.lastRun = undefined;
  pending.throttled = undefined;
}

/** Nothing waits to be written with a run's next write (spend, vars, cooldown, throttle). */
const nothingPending = (p: Pending) =>
  !p.spend && p.vars === undefined && p.lastRun === undefined && p.throttled === undefined;

/**
 * Ends a run: marks it done and writes it; the entry's last run removes the entry. On an ordered
 * store the run does not wait for that write's fsync (the next commit carries it): a crash before
 * it resumes the run, whose steps are done or written ahead with their Idempotency-Key, so
 * nothing is done twice. The entry's removal with nothing else to write (the usual end of an
 * event) goes with the bot's next write (BotState.endLater) — not for a rule that may hold
 * dialogs (an `ask`, a plugin's step: `ctx.ask`), whose records name their entry.
 */
export async function finishRun({ run, progress, pending }: RunWriteParts): Promise<void> {
  run.shared.remaining--;
  progress.done = true;
  const { state } = run.runner.writes;
  const finish = run.shared.remaining === 0;
  const dialogs = run.rule.asks || run.rule.steps.some((st) => st.action.plugin);
  if (finish && state.ordered && !dialogs && nothingPending(pending)) await state.endLater(run.entry.id);
  else await flush({ run, progress, pending, finish }, 'commit');
  crashPoint('after-run', run.runner.self.bot.name, run.rule.id);
}
