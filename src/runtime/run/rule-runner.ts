import type { Logger } from 'pino';
import type { Client } from '../../client/client.js';
import { ApiRequestError, isTransient, UnauthorizedError } from '../../client/errors.js';
import { AbortedError } from '../../util/abort.js';
import { StepTimeoutError, withStepTimeout } from '../../util/step-timeout.js';
import type { Release } from '../../clock/clock.js';
import type { UserRef } from '../../client/types.js';
import type { Clock } from '../../clock/clock.js';
import { DEFAULT_LOOP_GUARD, type CompiledBot, type CompiledRule, type CompiledStep } from '../define/bot.js';
import { actionContext, idempotencyKey, runScope, spendDate, type StepEffects } from './run-context.js';
import { crashPoint } from './crash-points.js';
import { DailyCapError, type StepErrorKind, type BotState, type InboxEntry, type RunProgress, type RunWrite, type StepProgress } from '../state/bot-state.js';
import { limitKey } from './run-limits.js';
import { renderDeep } from '../liquid/templates.js';
import { assertVariables, templatePaths, templatesIn } from '../liquid/template-check.js';
import { decide, type Decision } from './decide.js';
import { compact, startTrace, type Trace, type TraceLog, type TraceStep } from '../state/traces.js';
import { LimitError, traceInfo, type RunScope, type TriggerDef } from '../contract/types.js';
import type { TraceReason } from '../contract/trace-reasons.js';
import { FairQueue } from './fair-queue.js';
import { chooseBranch, errorScope, guardHolds, Restarted, Restarts } from './run-control.js';
import { answeredAt, LoopGuard } from './loop-guard.js';
import { iso } from '../../clock/clock.js';

export interface EngineDeps {
  bot: CompiledBot;
  state: BotState;
  api: Client;
  me: UserRef;
  traces: TraceLog;
  log: Logger;
  clock: Clock;
  dryRun: boolean;
  signal: AbortSignal;
  isContact(pin: string): Promise<boolean>;
  /** The key was refused: the bot must stop. */
  onUnauthorized(err: UnauthorizedError): void;
  /** Whether a user is one that bots act as (for `ignore_bots`). */
  isBot?(userId: string): boolean;
  /** Working time an action, the conditions of a rule, may take (`runtime.step_timeout`). */
  stepTimeoutMs: number;
  /** First wait after a transient failure (doubles to `retryCapMs`). */
  retryBaseMs?: number;
  retryCapMs?: number;
}

/** The trace reason of a step's error kind (state written before 0.2 says `error`). Internal. */
const traceReason = (kind: StepErrorKind | undefined): StepFailure['reason'] => (kind === undefined || kind === 'error' ? 'failed' : kind);

/** Step errors whose message already names what ran out of time. Internal. */
const TIMEOUTS: ReadonlySet<string> = new Set(['timeout', 'plugin_timeout']);

/** How a failed step ends its run in the trace: the reason, and a message naming the step. Internal. */
function stepFailure(step: CompiledStep, error: StepProgress['error']): StepFailure {
  const reason = traceReason(error?.kind);
  const message = error?.message ?? 'failed';
  return { failed: true, reason, message: TIMEOUTS.has(reason) ? message : `step ${step.index} (${step.action.name}) failed: ${message}`, plugin: error?.plugin, frame: error?.frame };
}

/** The plugin fields of a step's error, for its trace. Internal. */
const pluginOf = (sp: StepProgress) => (sp.error?.plugin ? { plugin: sp.error.plugin, ...(sp.error.frame ? { frame: sp.error.frame } : {}) } : {});

/** Raised inside a run when the bot is stopping: the entry stays for the next start. */
class Interrupted extends Error {}

/**
 * Changes of a run not written yet: they go with its next write (a step's write-ahead, or the
 * run's last write), so an event with one API step costs two writes of the bot's state.
 * Internal.
 */
interface Pending {
  lastRun?: RunWrite['lastRun'];
  throttled?: RunWrite['throttled'];
  vars?: Record<string, unknown>;
  /** Cents to add to today's spend (negative gives back a refused transfer). */
  spend: number;
}

/** A step that failed for good. Internal. */
interface StepFailure {
  failed: true;
  reason: Exclude<StepErrorKind, 'error'>;
  message: string;
  /** A plugin's failure: the plugin, and the first frame of its own code. */
  plugin?: string;
  frame?: string;
}

/**
 * Runs the rules of one bot over its inbox entries. Each matching rule gets a run, started in
 * event order and governed by its mode (queued: one after another; single: skip while one runs;
 * parallel). A run decides once (enabled, cooldown, conditions), then takes its steps; each step
 * with an effect is written ahead with its exact arguments and carries an Idempotency-Key, so a
 * run resumed after a crash repeats nothing. Transient failures (network, 5xx, 429) are retried
 * in place with backoff; a 401 stops the bot; other errors fail the step. Every run is traced,
 * including why a rule did not run.
 */
export class RuleRunner {
  /** Per queued rule: its runs, one at a time, round robin by sender. */
  private readonly queues = new Map<string, FairQueue>();
  /** Per rule: runs that decided to run and have not ended (mode single skips while one goes). */
  private readonly running = new Map<string, number>();
  private active = 0;
  private waiters: Array<() => void> = [];
  /** One clock hold per run taking a step: a virtual clock's advance waits for them. */
  private readonly holds: Release[] = [];
  private readonly guard: LoopGuard;
  /** Mode restart: the run of each rule that is going. */
  private readonly restarts = new Restarts();

  constructor(private readonly d: EngineDeps) {
    this.guard = new LoopGuard(d.bot.loopGuard === false ? undefined : (d.bot.loopGuard ?? DEFAULT_LOOP_GUARD), d.state);
  }

  /** Handles an entry; resolves when every rule's run for it has ended (or the bot stops). */
  async handle(entry: InboxEntry): Promise<void> {
    const rules = this.d.bot.rules.filter((r) => r.triggers.some((t) => t.def.name === entry.event.type) && (!entry.event.rule || entry.event.rule === r.id));
    const todo = rules.filter((r) => !entry.runs[r.id]?.done);
    if (todo.length === 0) {
      this.busy(1);
      try {
        await this.d.state.finish(entry.id);
      } finally {
        this.busy(-1);
      }
      return;
    }
    const shared = { remaining: todo.length };
    await Promise.all(todo.map((rule) => this.schedule(rule, entry, shared)));
  }

  /** Resolves once no run is taking a step (runs in `wait` or backoff do not count). */
  idle(): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (this.active !== 0) return void this.waiters.push(check);
        setImmediate(() => (this.active === 0 ? resolve() : this.waiters.push(check)));
      };
      check();
    });
  }

  private busy(delta: number): void {
    this.active += delta;
    if (delta > 0) this.holds.push(this.d.clock.hold(`bot ${this.d.bot.name}: run`));
    else this.holds.pop()?.();
    if (this.active === 0) {
      const w = this.waiters;
      this.waiters = [];
      for (const f of w) f();
    }
  }

  private schedule(rule: CompiledRule, entry: InboxEntry, shared: { remaining: number }): Promise<void> {
    if (rule.mode !== 'queued') return this.run(rule, entry, shared);
    let queue = this.queues.get(rule.id);
    if (!queue) this.queues.set(rule.id, (queue = new FairQueue(this.d.bot.perSender?.maxQueued)));
    const actor = this.triggerOf(rule, entry.event.type).actor?.(entry.event.payload, this.d.me);
    // a run resumed after a restart is not refused: it had its place already
    const resumed = !!entry.runs[rule.id]?.decision;
    const queued = queue.push(actor?.pin_code ?? '', () => this.run(rule, entry, shared)) ?? (resumed ? queue.push(`resumed ${entry.id}`, () => this.run(rule, entry, shared)) : undefined);
    if (queued) return queued;
    const who = actor ? `${actor.display_name} (${actor.pin_code})` : 'this sender';
    return this.skip(rule, entry, shared, 'sender_backlog', `${who} already has ${this.d.bot.perSender!.maxQueued} events waiting for this rule (per_sender.max_queued)`);
  }

  /** Ends a rule's run for an entry without running it (traced with the reason). */
  private async skip(rule: CompiledRule, entry: InboxEntry, shared: { remaining: number }, reason: TraceReason, message: string): Promise<void> {
    this.busy(1);
    try {
      const trace = { ...this.newTrace(rule, entry, false), outcome: 'not_run' as const, reason, message };
      await this.finishRun(rule, entry, shared, { decision: { run: false, reason }, steps: [] }, { spend: 0 });
      this.d.traces.add(trace);
    } finally {
      this.busy(-1);
    }
  }

  private triggerOf(rule: CompiledRule, type: string): TriggerDef {
    return rule.triggers.find((t) => t.def.name === type)!.def;
  }

  private newTrace(rule: CompiledRule, entry: InboxEntry, resumed: boolean): Trace {
    const trigger = this.triggerOf(rule, entry.event.type);
    return startTrace({ bot: this.d.bot, rule: rule.id, event: entry.event, who: trigger.actor?.(entry.event.payload, this.d.me), at: this.d.clock.now(), resumed });
  }

  /** Writes the run's progress with its pending changes (and removes the entry when `finish`). */
  private async flush(rule: CompiledRule, entry: InboxEntry, progress: RunProgress, pending: Pending, finish = false): Promise<void> {
    const spend = pending.spend ? { date: spendDate(this.d.clock), cents: pending.spend, max: pending.spend > 0 ? this.d.bot.limits.maxPerDay : undefined } : undefined;
    await this.d.state.write({ entry: entry.id, rule: rule.id, progress, vars: pending.vars, spend, lastRun: pending.lastRun, throttled: pending.throttled, finish });
    pending.spend = 0;
    pending.vars = undefined;
    pending.lastRun = undefined;
    pending.throttled = undefined;
  }

  private async finishRun(rule: CompiledRule, entry: InboxEntry, shared: { remaining: number }, progress: RunProgress, pending: Pending) {
    shared.remaining--;
    progress.done = true;
    await this.flush(rule, entry, progress, pending, shared.remaining === 0);
  }

  /** Retries `fn` on transient failures with doubling backoff until it works or the bot stops. */
  private async persist<T>(what: string, fn: () => Promise<T>): Promise<T> {
    const base = this.d.retryBaseMs ?? 1000;
    for (let attempt = 1; ; attempt++) {
      if (this.d.signal.aborted) throw new Interrupted();
      try {
        return await fn();
      } catch (err) {
        if (this.d.signal.aborted || err instanceof AbortedError) throw new Interrupted();
        if (!isTransient(err)) throw err;
        const wait = Math.min(this.d.retryCapMs ?? 60_000, base * 2 ** (attempt - 1));
        this.d.log.warn({ err: (err as Error).message, attempt, wait_ms: wait }, `${what} failed for now; retrying`);
        this.busy(-1);
        try {
          await this.d.clock.sleep(wait, this.d.signal).catch(() => undefined);
        } finally {
          this.busy(1);
        }
      }
    }
  }

  private async run(rule: CompiledRule, entry: InboxEntry, shared: { remaining: number }): Promise<void> {
    let counted = false;
    this.busy(1);
    const t0 = performance.now();
    // the entry may have moved on while this run was queued: take its latest progress
    const current = this.d.state.entry(entry.id) ?? entry;
    const progress: RunProgress = structuredClone(current.runs[rule.id] ?? { steps: [] });
    // after a reload, progress is kept only for the leading steps that did not change
    const changed = rule.steps.findIndex((st) => progress.steps[st.index] && progress.steps[st.index]!.sig !== st.sig);
    if (changed !== -1) progress.steps.length = changed;
    const trace = this.newTrace(rule, entry, !!progress.decision);
    const trigger = this.triggerOf(rule, entry.event.type);
    const pending: Pending = { spend: 0 };
    const scope = runScope({ bot: this.d.bot, event: entry.event, me: this.d.me, state: this.d.state, clock: this.d.clock, api: this.d.api, steps: progress.steps.map((s) => s.result), pendingVars: () => pending.vars });
    const actor = trigger.actor?.(entry.event.payload, this.d.me);
    const loopKey = LoopGuard.keyOf(entry.event, actor);
    let runSignal: AbortSignal | undefined;
    let restartDone: (() => void) | undefined;
    try {
      if (this.d.signal.aborted) throw new Interrupted();
      if (!progress.decision) {
        let decision = this.screen(actor) ?? (await this.loopCheck(rule, entry, actor, loopKey)) ?? (await this.persist('condition', () => withStepTimeout(`the conditions of rule ${rule.id}`, this.d.stepTimeoutMs, (signal) => this.decide(rule, scope, trigger, signal), this.d.signal)));
        // mode single: only a run that would take its steps is skipped while another one goes
        if (decision.run && rule.mode === 'single' && (this.running.get(rule.id) ?? 0) > 0) {
          decision = { run: false, reason: 'single_running', message: 'mode single: a run of this rule is still going', conditions: decision.conditions };
        }
        // named groups of `matches:` (match.NAME) are kept with the decision: a resumed run sees them
        if (decision.run && scope.match) decision = { ...decision, match: scope.match };
        progress.decision = decision;
        progress.started_at = this.d.clock.now();
        trace.conditions = decision.conditions;
        if (!decision.run) {
          Object.assign(trace, { outcome: 'not_run', reason: decision.reason, message: decision.message });
          await this.finishRun(rule, entry, shared, progress, pending);
          return;
        }
        // written with the first step's write-ahead: a crash before it just decides again
        const now = this.d.clock.now();
        if (rule.cooldownMs) pending.lastRun = { key: limitKey(rule.id, rule.cooldownPer, scope.event, actor), at: now, expired: now - rule.cooldownMs };
        if (rule.throttle) pending.throttled = { key: limitKey(rule.id, rule.throttle.per, scope.event, actor), at: now, withinMs: rule.throttle.withinMs };
      } else trace.conditions = progress.decision.conditions;
      counted = true;
      this.running.set(rule.id, (this.running.get(rule.id) ?? 0) + 1);
      if (progress.decision.match) scope.match = { ...progress.decision.match };
      if (rule.mode === 'restart') ({ signal: runSignal, done: restartDone } = await this.restarts.takeOver(rule.id));
      let failed: StepFailure | undefined;
      for (const step of rule.steps) {
        if (this.d.signal.aborted) throw new Interrupted();
        if (runSignal?.aborted) throw new Restarted();
        // the main steps until one fails; then the on_error steps, if any; a branch's steps if chosen
        if (!!step.onError !== (failed !== undefined) || !guardHolds(step, progress)) continue;
        const done = progress.steps[step.index];
        if (done && done.status !== 'started') {
          trace.steps.push({ index: step.index, action: step.action.name, status: done.status as TraceStep['status'], args: compact(done.args), result: compact(done.result), error: done.error?.message, ...pluginOf(done), resumed: true });
          if (step.branches) Object.assign((scope.match ??= {}), (done.result as { match?: object } | undefined)?.match);
          if (done.status === 'failed' && !step.continueOnError) {
            if (step.onError) break;
            failed = stepFailure(step, done.error);
            scope.error = errorScope(step, done.error);
          }
          continue;
        }
        const out = step.branches
          ? await chooseBranch(step, progress, scope, (what, fn) => this.persist('condition', () => withStepTimeout(`step ${step.index} (choose) of rule ${rule.id}: ${what}`, this.d.stepTimeoutMs, fn, this.d.signal)), { api: this.d.api, trigger, isContact: (pin) => this.d.isContact(pin), store: this.d.state.store, log: this.d.log.child({ rule: rule.id }), clock: this.d.clock })
          : await this.step(rule, step, entry, progress, scope, trigger, pending, runSignal);
        trace.steps.push({ index: step.index, action: step.action.name, status: out.status as TraceStep['status'], args: compact(out.args), result: compact(out.result), error: out.error?.message, ...pluginOf(out), duration_ms: out.duration_ms });
        scope.steps[step.index] = out.result;
        if (out.status === 'failed' && !step.continueOnError) {
          if (step.onError) break; // a failing on_error step ends the run
          failed = stepFailure(step, out.error);
          scope.error = errorScope(step, out.error);
        }
      }
      if (failed) Object.assign(trace, { outcome: 'failed', reason: failed.reason, message: failed.message }, failed.plugin ? { plugin: failed.plugin, frame: failed.frame } : {});
      else if (trace.steps.some((s) => s.status === 'dry_run')) trace.outcome = 'dry_run';
      await this.finishRun(rule, entry, shared, progress, pending);
      const acted = rule.steps.filter((st) => st.action.effect === 'api' && progress.steps[st.index]?.status === 'done');
      if (acted.length) {
        // the answer's server time: from its result, else the event's time plus the time since the bot saw it
        const now = this.d.clock.now();
        const fallback = entry.event.ts !== undefined ? entry.event.ts + (now - entry.event.at) : now;
        this.guard.answered(loopKey, answeredAt(acted.map((st) => progress.steps[st.index]!.result), fallback));
      }
    } catch (err) {
      if (runSignal?.aborted && !this.d.signal.aborted) {
        // mode restart: a newer event took over; this run ends here, for good
        Object.assign(trace, { outcome: 'failed', reason: 'restarted', message: 'a newer event restarted this rule (mode restart)' });
        await this.finishRun(rule, entry, shared, progress, pending).catch((e) => this.d.log.error({ err: e }, 'could not record a restarted run'));
      } else if (err instanceof Interrupted || this.d.signal.aborted) {
        Object.assign(trace, { outcome: 'interrupted', reason: 'stopping', message: 'the bot stopped during this run; it resumes at the next start' });
      } else if (err instanceof UnauthorizedError) {
        Object.assign(trace, { outcome: 'failed', reason: 'unauthorized', message: 'the server refused the API key (401); the bot stopped' });
        this.d.onUnauthorized(err);
      } else {
        this.d.log.error({ err, rule: rule.id, event: entry.key }, 'rule run failed');
        const info = traceInfo(err);
        Object.assign(trace, { outcome: 'failed', reason: info?.traceReason ?? (err instanceof StepTimeoutError ? 'timeout' : 'failed'), message: (err as Error).message }, info?.plugin ? { plugin: info.plugin, frame: info.frame } : {});
      }
    } finally {
      trace.duration_ms = Math.round(performance.now() - t0);
      this.d.traces.add(trace);
      if (counted) this.running.set(rule.id, (this.running.get(rule.id) ?? 1) - 1);
      restartDone?.();
      this.busy(-1);
    }
  }

  /** Events the bot does not answer whatever its rules say: from bots (`ignore_bots`). */
  private screen(actor: UserRef | undefined): Decision | undefined {
    if (this.d.bot.ignoreBots && actor && this.d.isBot?.(actor.id)) {
      return { run: false, reason: 'from_bot', message: `${actor.display_name} (${actor.pin_code}) is a bot, and ignore_bots is on` };
    }
    return undefined;
  }

  /** The loop guard: an exchange that looks like a loop between bots is paused (traced `loop_suspected`). */
  private async loopCheck(rule: CompiledRule, entry: InboxEntry, actor: UserRef | undefined, loopKey: string | undefined): Promise<Decision | undefined> {
    const verdict = await this.guard.check(loopKey, entry.event, !!actor && this.d.isBot?.(actor.id) === true, this.d.clock.now());
    if (!verdict) return undefined;
    if (verdict.tripped) this.d.log.warn({ rule: rule.id, key: loopKey }, `bot ${this.d.bot.name}: loop suspected: ${verdict.message}`);
    return { run: false, reason: 'loop_suspected', message: verdict.message };
  }

  private decide(rule: CompiledRule, scope: RunScope, trigger: TriggerDef, signal: AbortSignal) {
    const ctx = { scope, api: this.d.api, trigger, isContact: (pin: string) => this.d.isContact(pin), signal, store: this.d.state.store, log: this.d.log.child({ rule: rule.id }), clock: this.d.clock };
    return decide(rule, ctx, this.d.state, this.d.clock);
  }

  /**
   * Takes one step: render, check, write ahead (steps with an effect), run (retrying transient
   * failures), record. The outcome is written with the next write of the run.
   */
  private async step(rule: CompiledRule, step: CompiledStep, entry: InboxEntry, progress: RunProgress, scope: RunScope, trigger: TriggerDef, pending: Pending, runSignal?: AbortSignal): Promise<StepProgress> {
    const { action } = step;
    const t0 = performance.now();
    const effects: StepEffects = {};
    // a local step (a wait) of a restart rule also stops when a newer event takes over; a request does not
    const signal = runSignal && action.effect === 'local' ? AbortSignal.any([this.d.signal, runSignal]) : this.d.signal;
    const ctx = actionContext({
      bot: this.d.bot,
      api: this.d.api,
      scope,
      trigger,
      key: idempotencyKey(this.d.bot.name, rule.id, entry.key, step.index, step.sig),
      signal,
      log: this.d.log.child({ rule: rule.id, step: step.index }),
      clock: this.d.clock,
      rule: rule.id,
      store: this.d.state.store,
      effects,
      onPark: (parked) => this.busy(parked ? -1 : 1),
    });
    const record = (sp: StepProgress): StepProgress => {
      const out = { ...sp, sig: step.sig, duration_ms: sp.status === 'started' ? undefined : Math.round(performance.now() - t0) };
      progress.steps[step.index] = out;
      return out;
    };
    const fail = (err: unknown, args: unknown) => {
      const info = traceInfo(err);
      const timeout = err instanceof StepTimeoutError ? (action.plugin ? 'plugin_timeout' : 'timeout') : undefined;
      const kind = (info?.traceReason as StepErrorKind | undefined) ?? (err instanceof LimitError || err instanceof DailyCapError ? 'limit' : err instanceof ApiRequestError ? 'api' : (timeout ?? 'failed'));
      const code = err instanceof ApiRequestError ? err.code : undefined;
      const message = timeout === 'plugin_timeout' && !info ? `plugin ${action.plugin}: ${(err as Error).message}` : (err as Error).message;
      const plugin = info?.plugin ?? action.plugin;
      this.d.log.info({ rule: rule.id, step: step.index, action: action.name, err: message }, 'step failed');
      return record({ status: 'failed', args, error: { kind, code, message, ...(plugin ? { plugin, frame: info?.frame } : {}) } });
    };
    let args: unknown;
    const resumed = progress.steps[step.index];
    if (resumed?.status === 'started') args = resumed.args;
    else {
      try {
        if (action.templated !== false) for (const t of templatesIn(step.args)) assertVariables(t.text, templatePaths(t.text), scope, entry.event.type);
        const rendered = action.templated === false ? step.args : await renderDeep(step.args, scope);
        args = action.prepare ? action.prepare(rendered, ctx) : rendered;
      } catch (err) {
        return fail(err, undefined);
      }
      if (this.d.dryRun && action.effect === 'api') {
        this.d.log.info({ rule: rule.id, step: step.index, action: action.name, args }, `dry run: would ${action.name}`);
        return record({ status: 'dry_run', args });
      }
      if (action.effect === 'api' || action.durable) {
        // write ahead: the exact arguments (and the money it reserves) are durable before the request
        record({ status: 'started', args });
        pending.spend += effects.spendCents ?? 0;
        try {
          await this.flush(rule, entry, progress, pending);
        } catch (err) {
          if (!(err instanceof DailyCapError)) throw err;
          pending.spend -= effects.spendCents ?? 0;
          return fail(err, args);
        }
      }
    }
    let result: unknown;
    try {
      // under the step timeout and an error boundary: a throw or a hang fails this step only
      const what = `step ${step.index} (${action.name}) of rule ${rule.id}`;
      result = await this.persist(action.name, () => withStepTimeout(what, this.d.stepTimeoutMs, (s) => action.run(args, { ...ctx, signal: s }), signal));
    } catch (err) {
      if (err instanceof Interrupted || err instanceof UnauthorizedError) throw err;
      // a refused transfer does not count against the daily cap
      pending.spend -= effects.spendCents ?? 0;
      return fail(err, args);
    }
    crashPoint(`after-action:${this.d.bot.name}:${rule.id}:${step.index}`);
    if (effects.vars) pending.vars = { ...pending.vars, ...effects.vars };
    return record({ status: 'done', args, result });
  }
}
