import type { UserRef } from '../../client/types.js';
import type { TraceReason } from '../contract/trace-reasons.js';
import type { ConditionResult } from '../contract/types.js';
import type { DialogRecord } from '../state/bot-state.js';
import { startTrace } from '../state/traces.js';
import type { Decision } from './decide.js';
import type { RuleRun, RunnerContext } from './runner-deps.js';

/**
 * Ends a dialog whose run waits, from outside the run: an admin's `bots end-dialog`, a newer
 * trigger of a `mode: restart` rule, or a reload that removed the dialog's rule. The run ends
 * (its ask step failed with error.code `dialog_ended`, no on_error), the record goes, messages
 * it had not read are handled as ordinary ones, and a trace says why. False when the run is not
 * parked (it is handling an answer): nothing changes.
 */
export async function endParked(
  runner: Pick<RunnerContext, 'self' | 'writes' | 'limits' | 'wake' | 'timers' | 'dialogs'>,
  rec: DialogRecord,
  how: { reason: TraceReason; message: string },
): Promise<boolean> {
  const { self, writes, limits } = runner;
  const entry = writes.state.entry(rec.entry);
  const run = entry?.runs[rec.rule];
  if (!rec.waiting && entry && run && !run.done) return false;
  let write;
  if (entry && run) {
    const progress = structuredClone(run);
    const sp = progress.steps[rec.step];
    progress.steps[rec.step] = {
      ...sp,
      status: 'failed',
      error: { kind: 'failed', code: 'dialog_ended', message: how.message },
    };
    progress.done = true;
    const rules = self.bot.rules.filter(
      (r) =>
        r.triggers.some((t) => t.def.name === entry.event.type) && (!entry.event.rule || entry.event.rule === r.id),
    );
    const finish = rules.every((r) => r.id === rec.rule || entry.runs[r.id]?.done);
    write = { entry: entry.id, rule: rec.rule, progress, finish };
  }
  runner.timers.cancel(rec.id);
  const requeued = await runner.dialogs.end(rec.id, write, rec.entry);
  if (entry) {
    const trace = startTrace({
      bot: self.bot,
      rule: rec.rule,
      event: entry.event,
      who: rec.person,
      at: limits.clock.now(),
      resumed: true,
    });
    writes.traces.add({
      ...trace,
      outcome: 'failed',
      reason: how.reason,
      message: how.message,
      steps: [{ index: rec.step, action: 'ask', status: 'failed', error: how.message }],
    });
  }
  for (const e of requeued) runner.wake?.(e.id);
  return true;
}

/**
 * A new trigger of a rule that asks, by a person whose dialog of that rule waits (in another
 * conversation, or from another trigger): `mode: restart` ends the waiting dialog and runs;
 * every other mode skips the new event (traced `in_dialog`), as grammY refuses to enter a
 * conversation that is already active unless told to overwrite it. Undefined: nothing waits.
 */
export async function dialogMode(
  run: RuleRun,
  actor: UserRef,
  conditions: ConditionResult | undefined,
): Promise<Decision | undefined> {
  const { runner, rule, entry } = run;
  const mine = runner.dialogs.ofPerson(actor.pin_code).filter((r) => r.rule === rule.id && r.entry !== entry.id);
  if (mine.length === 0) return undefined;
  if (rule.mode === 'restart') {
    let all = true;
    for (const rec of mine)
      all =
        (await endParked(runner, rec, {
          reason: 'restarted',
          message: 'a newer event of this rule by the same person restarted the dialog (mode restart)',
        })) && all;
    if (all) return undefined;
  }
  const since = new Date(mine[0]!.since).toISOString();
  return {
    run: false,
    reason: 'in_dialog',
    message:
      `${actor.display_name} (${actor.pin_code}) is in a dialog of this rule since ` +
      `${since}; this event is skipped (mode ${rule.mode}; mode restart would start the ` +
      `dialog over)`,
    conditions,
  };
}
