import type { UserRef } from '../../client/types.js';
import { UnauthorizedError } from '../../client/errors.js';
import { withStepTimeout } from '../../util/step-timeout.js';
import type { RunScope, TriggerDef } from '../contract/types.js';
import type { RunProgress } from '../state/bot-state.js';
import { copyPlain } from '../state/copy.js';

type StepProgress = RunProgress['steps'][number];
import { replayable, type TraceSeen } from '../state/traces.js';
import { RunTrace } from './run-trace.js';
import { decide, type Decision } from './decide.js';
import { runEnding, stepFailure, type StepFailure } from './failure.js';
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
import { askAction } from '../define/ask.js';
import { pluginStep } from './dialog-plugin.js';
import type { CompiledStep } from '../define/bot.js';
import { metrics } from '../../telemetry/metrics.js';
import { causeOf, inSpan, tracingOn, type Span } from '../../telemetry/tracing.js';

/** Which list of a rule a step belongs to. */
const sectionOf = (step: CompiledStep) =>
  step.onError ? 'error' : step.onTimeout ? 'timeout' : step.onCancel ? 'cancel' : 'main';

/** Events the bot does not answer whatever its rules say: from bots (`ignore_bots`). */
function screen({ run, actor }: { run: RuleRun; actor: UserRef | undefined }): Decision | undefined {
  const { self } = run.runner;
  if (self.bot.ignoreBots && actor && self.isBot?.(actor.id)) {
    return {
      run: false,
      reason: 'from_bot',
      message: `${actor.display_name} (${actor.pin_code}) is a bot, and ignore_bots is on`,
    };
  }
  return undefined;
}

/**
 * The loop guard: an exchange that looks like a loop between bots is paused (traced
 * `loop_suspected`).
 */
async function loopCheck({
  run,
  actor,
  loopKey,
}: {
  run: RuleRun;
  actor: UserRef | undefined;
  loopKey: string | undefined;
}): Promise<Decision | undefined> {
  const { self, writes, limits } = run.runner;
  const verdict = await run.runner.guard.check(
    loopKey,
    run.entry.event,
    !!actor && self.isBot?.(actor.id) === true,
    limits.clock.now(),
  );
  if (!verdict) return undefined;
  if (verdict.tripped)
    writes.log.warn({ rule: run.rule.id, key: loopKey }, `bot ${self.bot.name}: loop suspected: ${verdict.message}`);
  return { run: false, reason: 'loop_suspected', message: verdict.message };
}

/**
 * The rule's decision (enabled, conditions, cooldown, throttle) under the step timeout, retrying
 * transient failures.
 */
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
  const { self, writes, limits } = run.runner;
  const { rule } = run;
  // no condition: the decision reads the bot's state only (enabled, cooldown, throttle), nothing
  // that can hang or fail for now — no watchdog, no retry loop (an AbortSignal and a timer a run)
  if (!rule.condition) {
    if (limits.signal.aborted) throw new Interrupted();
    const ctx = { scope, api: self.api, trigger, isContact: (pin: string) => self.isContact(pin) };
    return decide(rule, ctx, writes.state, limits.clock);
  }
  // the contact checks are kept in the trace: a replay of the decision reads them as recorded
  const isContact = async (pin: string) => ((seen.contacts ??= {})[pin] = await self.isContact(pin));
  const once = (signal: AbortSignal) =>
    decide(
      rule,
      {
        scope,
        api: self.api,
        trigger,
        isContact,
        signal,
        store: writes.state.store,
        log: writes.log.child({ rule: rule.id }),
        clock: limits.clock,
      },
      writes.state,
      limits.clock,
    );
  return retryTransient({
    runner: run.runner,
    what: 'condition',
    fn: () => withStepTimeout(`the conditions of rule ${rule.id}`, limits.stepTimeoutMs, once, limits.signal),
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
  const { self } = run.runner;
  const attributes = {
    'pinbot.bot': self.bot.name,
    'pinbot.rule': run.rule.id,
    'pinbot.event.type': run.entry.event.type,
  };
  return inSpan('pinbot.rule.run', attributes, (span) => runRuleTraced(run, span), {
    parent: causeOf(`${self.bot.name}\u0000${run.entry.event.key}`),
  });
}

/** One run as it goes: what its parts share. Internal. */
interface Going {
  run: RuleRun;
  progress: RunProgress;
  trace: RunTrace;
  trigger: TriggerDef;
  pending: Pending;
  scope: RunScope;
  actor: UserRef | undefined;
  loopKey: string | undefined;
  /** Counted among the rule's runs that go (mode single skips while one does). */
  counted: boolean;
  /** Mode restart: aborted when a newer event takes over; `restartDone` hands the rule on. */
  runSignal?: AbortSignal;
  restartDone?: () => void;
  /** A dialog ended by its timeout or a cancel word: its on_timeout / on_cancel steps run. */
  ended?: AskResult['ended'];
}

/** The steps of a run so far: the failure that ends its main steps, or the dialog it waits in. */
interface StepsSoFar {
  failed?: StepFailure;
  parked?: Parked;
}

/** `runRule`, its outcome told to `span`. Internal. */
async function runRuleTraced(run: RuleRun, span: Span | undefined): Promise<void> {
  const { writes, limits } = run.runner;
  run.runner.busy(1);
  const t0 = performance.now();
  const g = openRun(run);
  try {
    if (limits.signal.aborted) throw new Interrupted();
    if (!(await decideOnce(g))) return;
    await begin(g);
    const { failed, parked } = await takeSteps(g);
    // the run waits for an answer: its progress is written; a message or the timer wakes it
    if (parked) return;
    g.trace.stepsOver(failed, g.ended);
    await finishRun({ run, progress: g.progress, pending: g.pending });
    answered(g);
  } catch (err) {
    await abandon(g, err);
  } finally {
    g.trace.finished({ durationMs: performance.now() - t0, span, traces: writes.traces });
    release(g);
  }
}

/**
 * A run's working state: its latest progress (kept for the steps that did not change), trace and
 * scope. Internal.
 */
function openRun(run: RuleRun): Going {
  const { rule, entry } = run;
  const { self, writes, limits } = run.runner;
  // the entry may have moved on while this run was queued: take its latest progress
  const current = writes.state.entry(entry.id) ?? entry;
  const progress: RunProgress = copyPlain(current.runs[rule.id] ?? { steps: [] });
  // after a reload, progress is kept only for the leading steps that did not change
  const changed = rule.steps.findIndex((st) => progress.steps[st.index] && progress.steps[st.index]!.sig !== st.sig);
  if (changed !== -1) progress.steps.length = changed;
  // a dialog woken by its answer (or its timer) continues: that is no restart
  const continues = progress.steps.some((sp) => sp?.status === 'started' && sp.dialog);
  const trace = new RunTrace(newTrace(run, !!progress.decision && !continues));
  const trigger = triggerOf(run);
  const pending: Pending = { spend: 0 };
  const scope = runScope({
    bot: self.bot,
    event: entry.event,
    me: self.me,
    state: writes.state,
    clock: limits.clock,
    api: self.api,
    steps: progress.steps.map((s) => s.result),
    pendingVars: () => pending.vars,
  });
  const actor = trigger.actor?.(entry.event.payload, self.me);
  return {
    run,
    progress,
    trace,
    trigger,
    pending,
    scope,
    actor,
    loopKey: LoopGuard.keyOf(entry.event, actor),
    counted: false,
  };
}

/**
 * Decides once, and keeps the decision with the run (a resumed run does not decide again);
 * false when the run does not go (its trace says why, and it is written as ended).
 */
async function decideOnce(g: Going): Promise<boolean> {
  const { run, progress, scope, actor, trace } = g;
  const { runner, rule } = run;
  const { self, limits } = runner;
  if (progress.decision) {
    trace.decidedBefore(progress.decision);
    return going(g);
  }
  const vars = replayable(scope.vars);
  const seen: TraceSeen = {
    ...(vars ? { vars: copyPlain(vars) } : { vars_omitted: true }),
    me: self.me,
  };
  trace.seen(seen);
  let decision =
    screen({ run, actor }) ??
    (await loopCheck({ run, actor, loopKey: g.loopKey })) ??
    (await decideRule({ run, scope, trigger: g.trigger, seen }));
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
  if (decision.run && rule.asks && actor) decision = (await dialogMode(run, actor, decision.conditions)) ?? decision;
  // named groups of `matches:` (match.NAME) are kept with the decision: a resumed run sees them
  if (decision.run && scope.match) decision = { ...decision, match: scope.match };
  progress.decision = decision;
  progress.started_at = limits.clock.now();
  trace.decided(decision);
  if (!decision.run) {
    await finishRun({ run, progress, pending: g.pending });
    return false;
  }
  limitsOf(g);
  return going(g);
}

/**
 * The run goes: counted among the rule's runs that go, in the same turn as its decision (mode
 * single decides against that count). Internal.
 */
function going(g: Going): true {
  const { runner, rule } = g.run;
  g.counted = true;
  runner.running.set(rule.id, (runner.running.get(rule.id) ?? 0) + 1);
  return true;
}

/**
 * The cooldown and throttle of a run that goes, written with its first step's write-ahead (a crash
 * before it just decides again). Internal.
 */
function limitsOf({ run: { rule, runner }, scope, actor, pending }: Going): void {
  const now = runner.limits.clock.now();
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
}

/**
 * The run goes: its `match.NAME` back, and (mode restart) the rule taken over. Internal.
 */
async function begin(g: Going): Promise<void> {
  const { runner, rule } = g.run;
  if (g.progress.decision!.match) g.scope.match = { ...g.progress.decision!.match };
  if (rule.mode === 'restart') ({ signal: g.runSignal, done: g.restartDone } = await runner.restarts.takeOver(rule.id));
}

/**
 * The steps: the main ones until one fails (or a dialog times out or is cancelled); then the
 * on_error (on_timeout, on_cancel) ones, if any; a branch's steps if chosen. A step a run before
 * this one took is not taken again. Internal.
 */
async function takeSteps(g: Going): Promise<StepsSoFar> {
  const { run, progress, scope } = g;
  const { limits } = run.runner;
  const s: StepsSoFar = {};
  scope.answers = {};
  for (const step of run.rule.steps) {
    if (limits.signal.aborted) throw new Interrupted();
    if (g.runSignal?.aborted) throw new Restarted();
    if (sectionOf(step) !== (s.failed ? 'error' : (g.ended ?? 'main')) || !guardHolds(step, progress)) continue;
    const done = progress.steps[step.index];
    if (done && done.status !== 'started') {
      g.trace.step(step, done, { resumed: true });
      if (done.ended) g.ended = done.ended;
      if (step.branches) Object.assign((scope.match ??= {}), (done.result as { match?: object } | undefined)?.match);
      if (step.action === askAction) dialogSoFar(g, done.result);
      if (failedFor(g, step, done, s)) break;
      continue;
    }
    const out = await stepOf(g, step);
    if ('parked' in out) {
      s.parked = out;
      g.trace.waiting(step, progress.steps[step.index]!, out.quiet);
      break;
    }
    g.trace.step(step, out, { duration_ms: out.duration_ms });
    if (out.ended) g.ended = out.ended;
    scope.steps[step.index] = out.result;
    if (step.action === askAction && out.status === 'done') dialogSoFar(g, out.result);
    if (failedFor(g, step, out, s)) break;
  }
  return s;
}

/**
 * An ask's answers for the later steps, and whether its dialog ended (timeout, cancel). Internal.
 */
function dialogSoFar(g: Going, result: unknown): void {
  Object.assign(g.scope.answers!, answersOf(result));
  g.ended = (result as AskResult | undefined)?.ended ?? g.ended;
}

/**
 * A step that failed for good ends the main steps (its on_error ones run, `error` in their
 * scope); true when the run's steps end here (an on_error step failed). Internal.
 */
function failedFor(g: Going, step: CompiledStep, sp: StepProgress, s: StepsSoFar): boolean {
  if (sp.status !== 'failed' || step.continueOnError) return false;
  if (step.onError) return true;
  s.failed = stepFailure({ step, error: sp.error });
  g.scope.error = errorScope(step, sp.error);
  return false;
}

/**
 * Takes one step: a `choose` (its branch), an `ask` (run/ask-step.ts) or an action, in a span.
 * Internal.
 */
function stepOf(g: Going, step: CompiledStep): Promise<StepProgress | Parked> {
  const { run, progress, scope, trigger, pending, runSignal } = g;
  const { runner, rule } = run;
  const { self, writes, limits } = runner;
  if (step.branches)
    return chooseBranch(
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
              limits.stepTimeoutMs,
              fn,
              limits.signal,
            ),
        }),
      {
        api: self.api,
        trigger,
        isContact: (pin) => self.isContact(pin),
        store: writes.state.store,
        log: writes.log.child({ rule: rule.id }),
        clock: limits.clock,
      },
    );
  if (step.action === askAction) return askStep({ run, step, progress, scope, trigger, pending, runSignal });
  return inSpan(
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
}

/**
 * A run that acted (an API step done): its latency metric, and the loop guard told when it
 * answered. Internal.
 */
function answered({ run, progress, trace, loopKey }: Going): void {
  const { runner, rule, entry } = run;
  const { self, limits } = runner;
  const acted = rule.steps.filter((st) => st.action.effect === 'api' && progress.steps[st.index]?.status === 'done');
  if (!acted.length) return;
  // the answer's server time: from its result, else the event's time plus the time since the bot
  // saw it
  const now = limits.clock.now();
  const fallback = entry.event.ts !== undefined ? entry.event.ts + (now - entry.event.at) : now;
  if (!trace.resumed)
    metrics.botEventToAction.observe([self.bot.name], Math.max(0, now - (entry.event.ts ?? entry.event.at)) / 1000);
  runner.guard.answered(
    loopKey,
    answeredAt(
      acted.map((st) => progress.steps[st.index]!.result),
      fallback,
    ),
  );
}

/**
 * A run that threw: its trace ends with why; mode restart records it as ended; a 401 stops the bot.
 * Internal.
 */
async function abandon(g: Going, err: unknown): Promise<void> {
  const { run, progress, pending } = g;
  const { writes, limits } = run.runner;
  const ending = runEnding({
    err,
    restarted: !!g.runSignal?.aborted && !limits.signal.aborted,
    stopping: limits.signal.aborted,
  });
  g.trace.ended(ending);
  // mode restart: a newer event took over; this run ends here, for good
  if (ending.reason === 'restarted')
    await finishRun({ run, progress, pending }).catch((e) =>
      writes.log.error({ err: e }, 'could not record a restarted run'),
    );
  else if (ending.reason === 'unauthorized' && err instanceof UnauthorizedError) run.runner.onUnauthorized(err);
  else if (ending.outcome === 'failed')
    writes.log.error({ err, rule: run.rule.id, event: run.entry.key }, 'rule run failed');
}

/**
 * What a run holds, given back: its count, the rule (mode restart), requeued messages, its clock
 * hold. Internal.
 */
function release(g: Going): void {
  const { runner, rule } = g.run;
  if (g.counted) runner.running.set(rule.id, (runner.running.get(rule.id) ?? 1) - 1);
  g.restartDone?.();
  for (const id of g.run.requeued?.splice(0) ?? []) runner.wake?.(id);
  runner.busy(-1);
}
