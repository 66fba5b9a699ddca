import { iso } from '../../clock/clock.js';
import type { Expect } from '../define/ask-expect.js';
import type { CompiledStep } from '../define/bot.js';
import type { ReplayEntry, StepProgress } from '../state/bot-state.js';
import { compact, type TraceStep } from '../state/traces.js';
import { DialogEnded, StepReplay, Suspended } from './dialog-replay.js';
import { askee, closeDialog, converse, newDialog, openDialog, type Parked } from './dialog-turn.js';
import { idempotencyKey } from './run-context.js';
import { type StepRun, takeStep } from './step.js';

/**
 * A plugin action's step, which may ask (`ctx.ask`): it runs the action; when the action asks
 * a question that has no recorded answer, the action is unwound (Suspended), the dialog opens
 * and the run parks like an `ask` step's (dialog-turn.ts: the same routing, timer, cancel words,
 * re-asks). When the answer is in, it is recorded at its position and the action runs again
 * from its start: `ctx.ask` gives the recorded answers, and the effects made through the ctx
 * (`reply`, `send`, `once`) give their recorded results instead of acting again. A step that
 * never asks costs nothing more than takeStep.
 */
export async function pluginStep(o: StepRun): Promise<StepProgress | Parked> {
  const { step, progress } = o;
  let quiet = true;
  for (;;) {
    const sp = progress.steps[step.index];
    if (sp?.status === 'started' && sp.asking && sp.dialog) {
      const t = await answerAsk(o, sp);
      if (t && 'parked' in t) return { parked: true, quiet: quiet && t.quiet };
      if (t) return t;
      quiet = false;
    }
    const replay = new StepReplay(structuredClone(progress.steps[step.index]?.replay ?? []), whatOf(o));
    let out: StepProgress;
    try {
      out = await takeStep({ ...o, dialog: replay });
    } catch (err) {
      if (err instanceof DialogEnded && err === replay.thrown) return endedUncaught(o, replay, err);
      if (!(err instanceof Suspended) || !replay.pending) throw err;
      const failed = await startAsk(o, replay);
      if (failed) return failed;
      quiet = false;
      continue;
    }
    if (replay.pending) return swallowed(o, replay, out);
    if (!replay.asked) return out;
    return (progress.steps[step.index] = { ...out, replay: replay.history });
  }
}

/** How a step is named in messages: `step 2 (shop.order) of rule order`. */
const whatOf = ({ step, run }: StepRun) => `step ${step.index + 1} (${step.action.name}) of rule ${run.rule.id}`;

/** The step's progress, with its sig and its calls so far. */
function record(o: StepRun, replay: StepReplay, sp: StepProgress): StepProgress {
  const args = o.progress.steps[o.step.index]?.args ?? replay.args;
  return (o.progress.steps[o.step.index] = { args, ...sp, sig: o.step.sig, replay: replay.history });
}

/** A `ctx.ask` with no answer yet: its dialog opens (the step's progress written with it). */
async function startAsk(o: StepRun, replay: StepReplay): Promise<StepProgress | undefined> {
  const { writes } = o.run.runner;
  if (writes.dryRun) {
    writes.log.info(
      { rule: o.run.rule.id, step: o.step.index, question: replay.pending!.question },
      'dry run: would ask',
    );
    return record(o, replay, { status: 'dry_run' });
  }
  const to = askee(o);
  if (!to)
    return record(o, replay, {
      status: 'failed',
      error: { kind: 'failed', message: `${whatOf(o)}: ctx.ask: ${o.trigger.name} events have no one to ask` },
    });
  record(o, replay, { status: 'started', asking: replay.pending, dialog: newDialog(o, to.who, to.target) });
  const held = await openDialog(o, to.who, to.target);
  if (!held) return undefined;
  const message =
    `${to.who.display_name} (${to.who.pin_code}) is already in a dialog of rule ` + `${held.rule} in this conversation`;
  return record(o, replay, { status: 'failed', error: { kind: 'failed', code: 'dialog_busy', message } });
}

/**
 * The waiting `ctx.ask` of a step takes its answer (or parks again). Once it ended — answered,
 * no answer in time, a cancel word, no valid answer — that is recorded at its position and the
 * dialog closes: undefined, the action runs again. A StepProgress when the step failed.
 */
async function answerAsk(o: StepRun, sp: StepProgress): Promise<StepProgress | Parked | undefined> {
  const { run, step, progress } = o;
  const { self } = run.runner;
  const ask = sp.asking!;
  const dl = sp.dialog!;
  const key = `${idempotencyKey(self.bot.name, run.rule.id, run.entry.key, step.index, step.sig)}:a${ask.at + 1}`;
  const target = o.trigger.replyTo?.(o.scope.event, o.scope.me);
  const t = await converse(o, { ...ask, expect: ask.expect as Expect }, dl, key, target!);
  if ('parked' in t) return t;
  const base = { status: sp.status, sig: sp.sig, args: sp.args };
  if (t.end === 'gone')
    return (progress.steps[step.index] = {
      ...base,
      replay: sp.replay,
      status: 'failed',
      error: { kind: 'failed', code: 'dialog_ended', message: 'the dialog was ended' },
    });
  if (t.end === 'failed') {
    progress.steps[step.index] = { ...base, replay: sp.replay, status: 'failed', error: t.error };
    await closeDialog(o, dl);
    return progress.steps[step.index];
  }
  const entry: ReplayEntry = { k: 'ask', q: ask.question, asked: dl.sent, answers: dl.answers };
  if (t.end === 'answered') Object.assign(entry, { value: t.value, ...(t.groups ? { groups: t.groups } : {}) });
  else if (t.end === 'invalid') Object.assign(entry, { ended: 'invalid_answer', message: t.message });
  else
    Object.assign(entry, {
      ended: t.end,
      message: t.end === 'timeout' ? 'no answer in time' : 'the person answered with a cancel word',
    });
  const replay = [...(sp.replay ?? [])];
  replay[ask.at] = entry;
  progress.steps[step.index] = { ...base, replay };
  await closeDialog(o, dl);
  return undefined;
}

/**
 * A DialogEnded the action did not catch: a timeout runs the rule's `on_timeout` steps, a
 * cancel word its `on_cancel` ones (the step is done, `ended`); no valid answer fails the step
 * with error.code `invalid_answer` (`on_error` runs).
 */
function endedUncaught(o: StepRun, replay: StepReplay, err: DialogEnded): StepProgress {
  if (err.reason === 'invalid_answer')
    return record(o, replay, {
      status: 'failed',
      error: { kind: 'invalid_answer', code: 'invalid_answer', message: err.message },
    });
  return record(o, replay, { status: 'done', ended: err.reason });
}

/** The action went on although its `ctx.ask` waited: it caught the suspension. A plugin bug, said loudly. */
function swallowed(o: StepRun, replay: StepReplay, out: StepProgress): StepProgress {
  const how = out.status === 'failed' ? `threw something else (${out.error?.message ?? '?'})` : 'returned';
  const plugin = o.step.action.plugin;
  return record(o, replay, {
    status: 'failed',
    error: {
      kind: 'plugin_failed',
      ...(plugin ? { plugin } : {}),
      message:
        `${whatOf(o)}: ctx.ask (call ${replay.pending!.at + 1}) was waiting for its ` +
        `answer, but the action ${how} instead of letting its Suspended error through — ` +
        `a try/catch around ctx.ask must rethrow what is not a DialogEnded`,
    },
  });
}

/**
 * The trace steps of a plugin step's questions (shown before the step itself, like `ask`
 * steps): each question, its answers (✓/✗), and how it ended; the waiting one last.
 */
export function pluginAskSteps(step: CompiledStep, sp: StepProgress | undefined): TraceStep[] {
  const out: TraceStep[] = [];
  for (const e of sp?.replay ?? []) {
    if (e?.k !== 'ask') continue;
    out.push({
      index: step.index,
      action: 'ask',
      status: e.ended === 'invalid_answer' ? 'failed' : 'done',
      args: compact(e.q),
      result: compact({
        asked: e.asked,
        answers: e.answers,
        ...(e.ended === 'timeout' || e.ended === 'cancel' ? { ended: e.ended } : { value: e.value }),
      }),
      ...(e.ended === 'invalid_answer' ? { error: e.message } : {}),
    });
  }
  return out;
}

/** The trace step of a plugin step whose `ctx.ask` waits. */
export function pluginWaitingStep(step: CompiledStep, sp: StepProgress): TraceStep {
  const dl = sp.dialog;
  return {
    index: step.index,
    action: 'ask',
    status: 'waiting',
    args: compact(sp.asking?.question),
    result: compact(
      dl ? { asked: dl.sent, answers: dl.answers, until: dl.until ? iso(dl.until) : undefined } : undefined,
    ),
  };
}
