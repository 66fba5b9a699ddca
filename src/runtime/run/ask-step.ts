import { askAction, type AskArgs } from '../define/ask.js';
import type { ActionRunContext } from '../contract/types.js';
import { renderDeep } from '../liquid/templates.js';
import { assertVariables, templatePaths, templatesIn } from '../liquid/template-check.js';
import type { AskProgress, StepProgress } from '../state/bot-state.js';
import { askee, closeDialog, converse, newDialog, openDialog, type Parked, type TurnEnd } from './dialog-turn.js';
import { stepErrorOf } from './failure.js';
import { idempotencyKey } from './run-context.js';
import type { StepRun } from './step.js';

export type { Parked } from './dialog-turn.js';

/** What an ask that ended saved: the answer's value and the named groups of its pattern. */
export interface AskResult {
  save?: string;
  value?: unknown;
  groups?: Record<string, string>;
  answer?: string;
  /** How the dialog ended without an answer: no answer in time, or a cancel word. */
  ended?: 'timeout' | 'cancel';
  /**
   * What happened, for coverage: `answered` (valid at the first question), `re-asked` (a retry
   * was sent: answered after it, or no valid answer in the attempts), `timeout`, `cancel`.
   */
  outcome?: 'answered' | 're-asked' | 'timeout' | 'cancel';
  asked: number;
  answers: AskProgress['answers'];
}

/** The answers an ask's result gives `answers` (its value under `save`, and its named groups). */
export function answersOf(result: unknown): Record<string, unknown> {
  const r = result as Partial<AskResult> | undefined;
  if (!r || r.ended) return {};
  return { ...(r.groups ?? {}), ...(r.save !== undefined ? { [r.save]: r.value } : {}) };
}

/** Renders and prepares an ask's arguments (templates first checked for what they read). */
async function prepareAsk(o: StepRun): Promise<AskArgs> {
  const { step, scope, run } = o;
  for (const t of templatesIn(step.args)) assertVariables(t.text, templatePaths(t.text), scope, run.entry.event.type);
  return askAction.prepare!(await renderDeep(step.args, scope), undefined as unknown as ActionRunContext) as AskArgs;
}

/**
 * Starts an ask: render its question, then open the dialog (write-ahead: the record and the
 * run's progress in one write). A StepProgress when it cannot (it failed, or a dry run).
 */
async function startAsk(o: StepRun, done: (sp: StepProgress) => StepProgress): Promise<StepProgress | undefined> {
  const { run, step, progress, trigger } = o;
  const { writes } = run.runner;
  let args: AskArgs;
  try {
    args = await prepareAsk(o);
  } catch (err) {
    return done({ status: 'failed', error: stepErrorOf({ err, action: step.action }) });
  }
  const to = askee(o);
  if (!to)
    return done({
      status: 'failed',
      args,
      error: { kind: 'failed', message: `${trigger.name} events have no one to ask` },
    });
  if (writes.dryRun) {
    writes.log.info({ rule: run.rule.id, step: step.index, args }, 'dry run: would ask');
    return done({ status: 'dry_run', args });
  }
  progress.steps[step.index] = { status: 'started', sig: step.sig, args, dialog: newDialog(o, to.who, to.target) };
  const held = await openDialog(o, to.who, to.target);
  if (!held) return undefined;
  const message =
    `${to.who.display_name} (${to.who.pin_code}) is already in a dialog of rule ` + `${held.rule} in this conversation`;
  return done({ status: 'failed', args, error: { kind: 'failed', code: 'dialog_busy', message } });
}

/** The step's outcome once its question ended (answered, timed out, cancelled, no valid answer). */
function askOutcome(args: AskArgs, dl: AskProgress, t: Exclude<TurnEnd, { end: 'gone' }>): StepProgress {
  const result = (extra: Partial<AskResult>): AskResult => ({
    ...(args.save ? { save: args.save } : {}),
    ...extra,
    asked: dl.sent,
    answers: dl.answers,
  });
  const base = { args, dialog: dl };
  switch (t.end) {
    case 'answered':
      return {
        ...base,
        status: 'done',
        result: result({
          value: t.value,
          outcome: dl.invalid > 0 ? 're-asked' : 'answered',
          answer: t.answer,
          ...(t.groups && Object.keys(t.groups).length ? { groups: t.groups } : {}),
        }),
      };
    case 'timeout':
      return { ...base, status: 'done', result: result({ ended: 'timeout', outcome: 'timeout' }) };
    case 'cancel':
      return { ...base, status: 'done', result: result({ ended: 'cancel', outcome: 'cancel', answer: t.answer }) };
    case 'invalid':
      return {
        ...base,
        status: 'failed',
        result: result({ outcome: 're-asked' }),
        error: { kind: 'invalid_answer', code: 'invalid_answer', message: t.message },
      };
    case 'failed':
      return { ...base, status: 'failed', error: t.error };
  }
}

/**
 * An `ask` step (the engine's own, like `choose`): render the question and open the dialog
 * (startAsk) → send it, take the answer or park the run (dialog-turn.ts, converse) → the step's
 * outcome, written with the end of the dialog. Every move is written before the next, so a run
 * resumed after kill -9 sends nothing twice and reads each answer once.
 */
export async function askStep(o: StepRun): Promise<StepProgress | Parked> {
  const { run, step, progress } = o;
  const { self } = run.runner;
  const t0 = performance.now();
  const done = (sp: StepProgress) =>
    (progress.steps[step.index] = { ...sp, sig: step.sig, duration_ms: Math.round(performance.now() - t0) });
  let quiet = true;
  if (progress.steps[step.index]?.status !== 'started') {
    const failed = await startAsk(o, done);
    if (failed) return failed;
  }
  const sp = progress.steps[step.index]!;
  const args = sp.args as AskArgs;
  const dl = sp.dialog!;
  const key = idempotencyKey(self.bot.name, run.rule.id, run.entry.key, step.index, step.sig);
  const target = o.trigger.replyTo?.(o.scope.event, o.scope.me);
  const t = await converse(o, args, dl, key, target!);
  if ('parked' in t) return { parked: true, quiet: quiet && t.quiet };
  quiet = false;
  if (t.end === 'gone')
    return done({
      status: 'failed',
      args,
      dialog: dl,
      error: { kind: 'failed', code: 'dialog_ended', message: 'the dialog was ended' },
    });
  const out = done(askOutcome(args, dl, t));
  await closeDialog(o, dl);
  return out;
}
