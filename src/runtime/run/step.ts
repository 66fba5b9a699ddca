import type { Logger } from 'pino';
import { UnauthorizedError } from '../../client/errors.js';
import { withStepTimeout } from '../../util/step-timeout.js';
import type { RunScope, StepDialog, TriggerDef } from '../contract/types.js';
import type { CompiledStep } from '../define/bot.js';
import { renderDeep } from '../liquid/templates.js';
import { assertVariables, templatePaths, templatesIn } from '../liquid/template-check.js';
import { DailyCapError, type RunProgress, type StepProgress } from '../state/bot-state.js';
import { crashPoint } from './crash-points.js';
import { DialogEnded, Suspended } from './dialog-replay.js';
import { stepErrorOf } from './failure.js';
import { Interrupted, retryTransient } from './retry.js';
import { actionContext, idempotencyKey, type StepEffects } from './run-context.js';
import { flush } from './run-record.js';
import type { Pending, RuleRun } from './runner-deps.js';

/** One step of a run, with what the run has so far. */
export interface StepRun {
  run: RuleRun;
  step: CompiledStep;
  progress: RunProgress;
  scope: RunScope;
  trigger: TriggerDef;
  pending: Pending;
  /** Mode restart: aborted when a newer event takes over. */
  runSignal?: AbortSignal;
  /** A plugin step: its questions and recorded effects (run/dialog-plugin.ts). */
  dialog?: StepDialog;
}

/**
 * Takes one step: render → prepare → write ahead (steps with an effect: the exact arguments,
 * and the money they reserve, are durable before the request) → run (under the step timeout,
 * retrying transient failures) → record. The outcome is written with the next write of the run.
 */
export async function takeStep({
  run,
  step,
  progress,
  scope,
  trigger,
  pending,
  runSignal,
  dialog,
}: StepRun): Promise<StepProgress> {
  const { runner, rule, entry } = run;
  const { self, writes, limits } = runner;
  const { action } = step;
  const t0 = performance.now();
  const effects: StepEffects = {};
  // a local step (a wait) of a restart rule also stops when a newer event takes over; a request does not
  const signal = runSignal && action.effect === 'local' ? AbortSignal.any([limits.signal, runSignal]) : limits.signal;
  const key = idempotencyKey(self.bot.name, rule.id, entry.key, step.index, step.sig);
  // the step's logger is made when an action logs (most never do)
  let log: Logger | undefined;
  const ctx = actionContext({
    bot: self.bot,
    api: self.api,
    scope,
    trigger,
    key,
    signal,
    log: () => (log ??= writes.log.child({ rule: rule.id, step: step.index })),
    clock: limits.clock,
    rule: rule.id,
    store: writes.state.store,
    effects,
    onPark: (parked) => runner.busy(parked ? -1 : 1),
    dialog,
  });
  const record = (sp: StepProgress): StepProgress => {
    const out = {
      ...sp,
      sig: step.sig,
      duration_ms: sp.status === 'started' ? undefined : Math.round(performance.now() - t0),
    };
    progress.steps[step.index] = out;
    return out;
  };
  const fail = (err: unknown, args: unknown) => {
    const error = stepErrorOf({ err, action });
    writes.log.info({ rule: rule.id, step: step.index, action: action.name, err: error.message }, 'step failed');
    return record({ status: 'failed', args, error });
  };
  let args: unknown;
  const resumed = progress.steps[step.index];
  if (resumed?.status === 'started') args = resumed.args;
  else {
    try {
      if (action.templated !== false)
        for (const t of templatesIn(step.args)) assertVariables(t.text, templatePaths(t.text), scope, entry.event.type);
      const rendered = action.templated === false ? step.args : await renderDeep(step.args, scope);
      args = action.prepare ? action.prepare(rendered, ctx) : rendered;
    } catch (err) {
      return fail(err, undefined);
    }
    if (writes.dryRun && action.effect === 'api') {
      writes.log.info({ rule: rule.id, step: step.index, action: action.name, args }, `dry run: would ${action.name}`);
      return record({ status: 'dry_run', args });
    }
    if (action.effect === 'api' || action.durable) {
      // write ahead: the exact arguments (and the money it reserves) are durable before the request
      record({ status: 'started', args });
      pending.spend += effects.spendCents ?? 0;
      try {
        // a built-in action's request commits after this write in the same journal (an ordered
        // store): its answer waits for the one fsync of both. A plugin may act outside: it waits.
        await flush({ run, progress, pending }, action.effect === 'api' && !action.plugin ? 'commit' : 'durable');
      } catch (err) {
        if (!(err instanceof DailyCapError)) throw err;
        pending.spend -= effects.spendCents ?? 0;
        return fail(err, args);
      }
      crashPoint('before-action', self.bot.name, rule.id, step.index);
    }
  }
  let result: unknown;
  try {
    // under the step timeout and an error boundary: a throw or a hang fails this step only
    // counted from 1, as people count (a path like rules.0.do.1 counts from 0)
    const what = `step ${step.index + 1} (${action.name}) of rule ${rule.id}`;
    const call = (s: AbortSignal) => action.run(args, ctx.withSignal(s));
    result = await retryTransient({
      runner,
      what: action.name,
      fn: () => withStepTimeout(what, limits.stepTimeoutMs, call, signal),
    });
  } catch (err) {
    if (err instanceof Interrupted || err instanceof UnauthorizedError) throw err;
    // a plugin's ctx.ask waits for its answer, or its dialog ended: dialog-plugin.ts takes it
    if (err instanceof Suspended || err instanceof DialogEnded) throw err;
    // a refused transfer does not count against the daily cap
    pending.spend -= effects.spendCents ?? 0;
    return fail(err, args);
  }
  crashPoint('after-action', self.bot.name, rule.id, step.index);
  if (effects.vars) pending.vars = { ...pending.vars, ...effects.vars };
  return record({ status: 'done', args, result });
}
