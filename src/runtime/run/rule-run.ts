import type { UserRef } from '../../client/types.js';
import { UnauthorizedError } from '../../client/errors.js';
import { withStepTimeout } from '../../util/step-timeout.js';
import type { RunScope, TriggerDef } from '../contract/types.js';
import type { RunProgress } from '../state/bot-state.js';
import { compact, replayable, type Trace, type TraceSeen, type TraceStep } from '../state/traces.js';
import { decide, type Decision } from './decide.js';
import { endTrace, runEnding, stepFailure, type StepFailure } from './failure.js';
import { answeredAt, LoopGuard } from './loop-guard.js';
import { Interrupted, retryTransient } from './retry.js';
import { runScope } from './run-context.js';
import { chooseBranch, errorScope, guardHolds, Restarted } from './run-control.js';
import { limitKey } from './run-limits.js';
import { finishRun, newTrace, triggerOf } from './run-record.js';
import type { Pending, RuleRun } from './runner-deps.js';
import { takeStep } from './step.js';
import { askStep, answersOf, type AskResult, type Parked } from './ask-step.js';
import { dialogMode } from './dialog-end.js';
import { pluginAskSteps, pluginStep, pluginWaitingStep } from './dialog-plugin.js';
import { askAction } from '../builtins/actions/ask.js';
import { iso } from '../../clock/clock.js';
import type { CompiledStep } from '../define/bot.js';
import { metrics } from '../../telemetry/metrics.js';
import { causeOf, inSpan, SpanStatusCode, tracingOn, type Span } from '../../telemetry/tracing.js';

/** The plugin fields of a step's error, for its trace. */
const pluginOf = (sp: RunProgress['steps'][number]) =>
  sp.error?.plugin ? { plugin: sp.error.plugin, ...(sp.error.frame ? { frame: sp.error.frame } : {}) } : {};

/** A step of a trace from its progress. */
const traceStep = (
  index: number,
  action: string,
  sp: RunProgress['steps'][number],
  extra: Partial<TraceStep>,
): TraceStep => ({
  index,
  action,
  status: sp.status as TraceStep['status'],
  args: compact(sp.args),
  result: compact(sp.result),
  error: sp.error?.message,
  ...pluginOf(sp),
  ...extra,
});

/** Which list of a rule a step belongs to. */
const sectionOf = (step: CompiledStep) =>
  step.onError ? 'error' : step.onTimeout ? 'timeout' : step.onCancel ? 'cancel' : 'main';

/** The trace step of an ask whose run now waits: the question and the dialog so far. */
function waitingStep(step: CompiledStep, sp: RunProgress['steps'][number]): TraceStep {
  if (sp.asking) return pluginWaitingStep(step, sp);
  const dl = sp.dialog;
  const args = sp.args as { question?: string } | undefined;
  return {
    index: step.index,
    action: 'ask',
    status: 'waiting',
    args: compact(args?.question),
    result: compact(
      dl ? { asked: dl.sent, answers: dl.answers, until: dl.until ? iso(dl.until) : undefined } : undefined,
    ),
  };
}

/** Events the bot does not answer whatever its rules say: from bots (`ignore_bots`). */
function screen({ run, actor }: { run: RuleRun; actor: UserRef | undefined }): Decision | undefined {
  const d = run.runner.deps;
  if (d.bot.ignoreBots && actor && d.isBot?.(actor.id)) {
    return {
      run: false,
      reason: 'from_bot',
      message: `${actor.display_name} (${actor.pin_code}) is a bot, and ignore_bots is on`,
    };
  }
  return undefined;
}

/** The loop guard: an exchange that looks like a loop between bots is paused (traced `loop_suspected`). */
async function loopCheck({
  run,
  actor,
  loopKey,
}: {
  run: RuleRun;
  actor: UserRef | undefined;
  loopKey: string | undefined;
}): Promise<Decision | undefined> {
  const d = run.runner.deps;
  const verdict = await run.runner.guard.check(
    loopKey,
    run.entry.event,
    !!actor && d.isBot?.(actor.id) === true,
    d.clock.now(),
  );
  if (!verdict) return undefined;
  if (verdict.tripped)
    d.log.warn({ rule: run.rule.id, key: loopKey }, `bot ${d.bot.name}: loop suspected: ${verdict.message}`);
  return { run: false, reason: 'loop_suspected', message: verdict.message };
}

/** The rule's decision (enabled, conditions, cooldown, throttle) under the step timeout, retrying transient failures. */
function decideRule({
  run,
  scope,
  trigger,
  seen,
}: {
  run: RuleRun;
  scope: RunScope;
  trigger: TriggerDef;
  seen: TraceSeen;
}): Promise<Decision> {
  const d = run.runner.deps;
  const { rule } = run;
  // the contact checks are kept in the trace: a replay of the decision reads them as recorded
  const isContact = async (pin: string) => ((seen.contacts ??= {})[pin] = await d.isContact(pin));
  const once = (signal: AbortSignal) =>
    decide(
      rule,
      {
        scope,
        api: d.api,
        trigger,
        isContact,
        signal,
        store: d.state.store,
        log: d.log.child({ rule: rule.id }),
        clock: d.clock,
      },
      d.state,
      d.clock,
    );
  return retryTransient({
    runner: run.runner,
    what: 'condition',
    fn: () => withStepTimeout(`the conditions of rule ${rule.id}`, d.stepTimeoutMs, once, d.signal),
  });
}

/**
 * One rule's run for one event: screen, decide once (kept with the run, so a resumed run does
 * not decide again), take the steps (the main ones until one fails, then the `on_error` ones;
 * a `choose` step's branch), and trace it — also when it did not run, and why. With tracing on
 * (OTEL_*), in a span `pinbot.rule.run` (bot, rule, event type, outcome, trace reason), a child
 * of the poll the event arrived in, with a span per step.
 */
export function runRule(run: RuleRun): Promise<void> {
  if (!tracingOn()) return runRuleTraced(run, undefined);
  const d = run.runner.deps;
  const attributes = {
    'pinbot.bot': d.bot.name,
    'pinbot.rule': run.rule.id,
    'pinbot.event.type': run.entry.event.type,
  };
  return inSpan('pinbot.rule.run', attributes, (span) => runRuleTraced(run, span), {
    parent: causeOf(`${d.bot.name}\u0000${run.entry.event.key}`),
  });
}

/** `runRule`, its outcome told to `span`. Internal. */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: longer than 80 lines before the rule; to split (issue 28 item 4)
async function runRuleTraced(run: RuleRun, span: Span | undefined): Promise<void> {
  const { runner, rule, entry } = run;
  const d = runner.deps;
  let counted = false;
  runner.busy(1);
  const t0 = performance.now();
  // the entry may have moved on while this run was queued: take its latest progress
  const current = d.state.entry(entry.id) ?? entry;
  const progress: RunProgress = structuredClone(current.runs[rule.id] ?? { steps: [] });
  // after a reload, progress is kept only for the leading steps that did not change
  const changed = rule.steps.findIndex((st) => progress.steps[st.index] && progress.steps[st.index]!.sig !== st.sig);
  if (changed !== -1) progress.steps.length = changed;
  // a dialog woken by its answer (or its timer) continues: that is no restart
  const continues = progress.steps.some((sp) => sp?.status === 'started' && sp.dialog);
  const trace: Trace = newTrace(run, !!progress.decision && !continues);
  const trigger = triggerOf(run);
  const pending: Pending = { spend: 0 };
  const scope = runScope({
    bot: d.bot,
    event: entry.event,
    me: d.me,
    state: d.state,
    clock: d.clock,
    api: d.api,
    steps: progress.steps.map((s) => s.result),
    pendingVars: () => pending.vars,
  });
  const actor = trigger.actor?.(entry.event.payload, d.me);
  const loopKey = LoopGuard.keyOf(entry.event, actor);
  let runSignal: AbortSignal | undefined;
  let restartDone: (() => void) | undefined;
  let ended: AskResult['ended'];
  // a resumed dialog that only waits again adds no trace
  let quiet = false;
  try {
    if (d.signal.aborted) throw new Interrupted();
    if (!progress.decision) {
      const vars = replayable(scope.vars);
      const seen: TraceSeen = { ...(vars ? { vars: structuredClone(vars) } : { vars_omitted: true }), me: d.me };
      trace.seen = seen;
      let decision =
        screen({ run, actor }) ??
        (await loopCheck({ run, actor, loopKey })) ??
        (await decideRule({ run, scope, trigger, seen }));
      // mode single: only a run that would take its steps is skipped while another one goes
      if (decision.run && rule.mode === 'single' && (runner.running.get(rule.id) ?? 0) > 0) {
        decision = {
          run: false,
          reason: 'single_running',
          message: 'mode single: a run of this rule is still going',
          conditions: decision.conditions,
        };
      }
      // the same person's dialog of this rule waits: mode restart ends it, other modes skip this event
      if (decision.run && rule.asks && actor)
        decision = (await dialogMode(run, actor, decision.conditions)) ?? decision;
      // named groups of `matches:` (match.NAME) are kept with the decision: a resumed run sees them
      if (decision.run && scope.match) decision = { ...decision, match: scope.match };
      progress.decision = decision;
      progress.started_at = d.clock.now();
      trace.conditions = decision.conditions;
      if (!decision.run) {
        Object.assign(trace, { outcome: 'not_run', reason: decision.reason, message: decision.message });
        await finishRun({ run, progress, pending });
        return;
      }
      // written with the first step's write-ahead: a crash before it just decides again
      const now = d.clock.now();
      if (rule.cooldownMs)
        pending.lastRun = {
          key: limitKey(rule.id, rule.cooldownPer, scope.event, actor),
          at: now,
          expired: now - rule.cooldownMs,
        };
      if (rule.throttle)
        pending.throttled = {
          key: limitKey(rule.id, rule.throttle.per, scope.event, actor),
          at: now,
          withinMs: rule.throttle.withinMs,
        };
    } else trace.conditions = progress.decision.conditions;
    counted = true;
    runner.running.set(rule.id, (runner.running.get(rule.id) ?? 0) + 1);
    if (progress.decision.match) scope.match = { ...progress.decision.match };
    if (rule.mode === 'restart') ({ signal: runSignal, done: restartDone } = await runner.restarts.takeOver(rule.id));
    let failed: StepFailure | undefined;
    let parked: Parked | undefined;
    scope.answers = {};
    for (const step of rule.steps) {
      if (d.signal.aborted) throw new Interrupted();
      if (runSignal?.aborted) throw new Restarted();
      // the main steps until one fails (or a dialog times out or is cancelled); then on_error
      // (on_timeout, on_cancel) steps, if any; a branch's steps if chosen
      if (sectionOf(step) !== (failed ? 'error' : (ended ?? 'main')) || !guardHolds(step, progress)) continue;
      const done = progress.steps[step.index];
      if (done && done.status !== 'started') {
        trace.steps.push(
          ...pluginAskSteps(step, done),
          traceStep(step.index, step.action.name, done, { resumed: true }),
        );
        if (done.ended) ended = done.ended;
        if (step.branches) Object.assign((scope.match ??= {}), (done.result as { match?: object } | undefined)?.match);
        if (step.action === askAction) {
          Object.assign(scope.answers, answersOf(done.result));
          ended = (done.result as AskResult | undefined)?.ended ?? ended;
        }
        if (done.status === 'failed' && !step.continueOnError) {
          if (step.onError) break;
          failed = stepFailure({ step, error: done.error });
          scope.error = errorScope(step, done.error);
        }
        continue;
      }
      const out = step.branches
        ? await chooseBranch(
            step,
            progress,
            scope,
            (what, fn) =>
              retryTransient({
                runner,
                what: 'condition',
                fn: () =>
                  withStepTimeout(
                    `step ${step.index + 1} (choose) of rule ${rule.id}: ${what}`,
                    d.stepTimeoutMs,
                    fn,
                    d.signal,
                  ),
              }),
            {
              api: d.api,
              trigger,
              isContact: (pin) => d.isContact(pin),
              store: d.state.store,
              log: d.log.child({ rule: rule.id }),
              clock: d.clock,
            },
          )
        : step.action === askAction
          ? await askStep({ run, step, progress, scope, trigger, pending, runSignal })
          : await inSpan(
              `pinbot.step ${step.action.name}`,
              { 'pinbot.step.index': step.index, 'pinbot.step.action': step.action.name },
              async (span) => {
                const o = { run, step, progress, scope, trigger, pending, runSignal };
                // a plugin's action may ask (ctx.ask): dialog-plugin.ts
                const sp = step.action.plugin ? await pluginStep(o) : await takeStep(o);
                span?.setAttribute('pinbot.step.status', 'parked' in sp ? 'waiting' : sp.status);
                return sp;
              },
            );
      if ('parked' in out) {
        parked = out;
        trace.steps.push(
          ...pluginAskSteps(step, progress.steps[step.index]),
          waitingStep(step, progress.steps[step.index]!),
        );
        break;
      }
      trace.steps.push(
        ...pluginAskSteps(step, out),
        traceStep(step.index, step.action.name, out, { duration_ms: out.duration_ms }),
      );
      if (out.ended) ended = out.ended;
      scope.steps[step.index] = out.result;
      if (step.action === askAction && out.status === 'done') {
        Object.assign(scope.answers, answersOf(out.result));
        ended = (out.result as AskResult | undefined)?.ended ?? ended;
      }
      if (out.status === 'failed' && !step.continueOnError) {
        if (step.onError) break; // a failing on_error step ends the run
        failed = stepFailure({ step, error: out.error });
        scope.error = errorScope(step, out.error);
      }
    }
    if (parked) {
      // the run waits for an answer: its progress is written; a message or the timer wakes it
      const dl = progress.steps.find((sp) => sp?.status === 'started' && sp.dialog)?.dialog;
      Object.assign(trace, {
        outcome: 'waiting',
        reason: 'waiting_for_answer',
        message: `waiting for an answer until ${dl?.until ? iso(dl.until) : '?'}`,
      });
      quiet = parked.quiet;
      return;
    }
    if (failed)
      endTrace(trace, {
        outcome: 'failed',
        reason: failed.reason,
        message: failed.message,
        plugin: failed.plugin,
        frame: failed.frame,
      });
    else if (ended)
      Object.assign(
        trace,
        ended === 'timeout'
          ? { reason: 'dialog_timeout', message: 'no answer in time: on_timeout ran' }
          : { reason: 'dialog_cancelled', message: 'a cancel word ended the dialog: on_cancel ran' },
      );
    else if (trace.steps.some((s) => s.status === 'dry_run')) trace.outcome = 'dry_run';
    await finishRun({ run, progress, pending });
    const acted = rule.steps.filter((st) => st.action.effect === 'api' && progress.steps[st.index]?.status === 'done');
    if (acted.length) {
      // the answer's server time: from its result, else the event's time plus the time since the bot saw it
      const now = d.clock.now();
      const fallback = entry.event.ts !== undefined ? entry.event.ts + (now - entry.event.at) : now;
      if (!trace.resumed)
        metrics.botEventToAction.observe([d.bot.name], Math.max(0, now - (entry.event.ts ?? entry.event.at)) / 1000);
      runner.guard.answered(
        loopKey,
        answeredAt(
          acted.map((st) => progress.steps[st.index]!.result),
          fallback,
        ),
      );
    }
  } catch (err) {
    const ending = runEnding({ err, restarted: !!runSignal?.aborted && !d.signal.aborted, stopping: d.signal.aborted });
    endTrace(trace, ending);
    // mode restart: a newer event took over; this run ends here, for good
    if (ending.reason === 'restarted')
      await finishRun({ run, progress, pending }).catch((e) =>
        d.log.error({ err: e }, 'could not record a restarted run'),
      );
    else if (ending.reason === 'unauthorized' && err instanceof UnauthorizedError) d.onUnauthorized(err);
    else if (ending.outcome === 'failed') d.log.error({ err, rule: rule.id, event: entry.key }, 'rule run failed');
  } finally {
    trace.duration_ms = Math.round(performance.now() - t0);
    span?.setAttributes({
      'pinbot.outcome': trace.outcome,
      ...(trace.reason ? { 'pinbot.reason': trace.reason } : {}),
    });
    if (trace.outcome === 'failed') span?.setStatus({ code: SpanStatusCode.ERROR, message: trace.message });
    // a run woken that parks again with nothing new (no question sent, no answer read) is no run of its own
    if (!quiet) {
      metrics.botRuns.inc([trace.bot, trace.rule, trace.outcome]);
      if (trace.outcome === 'not_run') metrics.botNotRun.inc([trace.bot, trace.rule, trace.reason ?? 'unknown']);
      d.traces.add(trace);
    }
    if (counted) runner.running.set(rule.id, (runner.running.get(rule.id) ?? 1) - 1);
    restartDone?.();
    for (const id of run.requeued?.splice(0) ?? []) d.wake?.(id);
    runner.busy(-1);
  }
}
