import type { Logger } from 'pino';
import type { Client } from '../client/client.js';
import { isTransient, UnauthorizedError } from '../client/errors.js';
import type { UserRef } from '../client/types.js';
import type { Clock } from '../clock/clock.js';
import { VirtualClock } from '../clock/virtual-clock.js';
import type { Scheduler } from '../clock/scheduler.js';
import { MemoryStore } from '../store/memory-store.js';
import type { Store } from '../store/types.js';
import type { CompiledBot } from './bot.js';
import { Engine } from './engine.js';
import { pollSources } from './poller.js';
import type { Registry } from './registry.js';
import { BotState, type InboxEntry } from './state.js';
import type { TraceLog } from './traces.js';
import type { BotEvent } from './types.js';

/** `runtime.step_timeout` when nothing says otherwise. */
export const DEFAULT_STEP_TIMEOUT_MS = 10_000;

/** The identity is not usable yet (e.g. its user does not exist): retried, not fatal. */
export class IdentityPending extends Error {}

export type RunnerStatus = 'starting' | 'waiting' | 'running' | 'failed' | 'stopped';

export interface RunnerOptions {
  bot: CompiledBot;
  registry: Registry;
  /** Resolves who the bot is: its client and profile. May throw IdentityPending or UnauthorizedError. */
  identify(signal: AbortSignal): Promise<{ api: Client; me: UserRef }>;
  /** The store of the bot's state (opened once the identity is known). */
  openStore(): Promise<Store>;
  traces: TraceLog;
  log: Logger;
  clock: Clock;
  scheduler: Scheduler;
  dryRun: boolean;
  /** Working time an action, a rule's conditions or a poll source may take (default 10 s). */
  stepTimeoutMs?: number;
  /** Spread the second poll over the interval (many bots do not poll in step). */
  jitter?: boolean;
  /** Entries waiting to be handled above which polling pauses. */
  maxBacklog?: number;
  retryBaseMs?: number;
}

/**
 * Runs one bot: resolves its identity (retrying while its user does not exist), resumes the
 * events it had not finished, fires `startup`, sets up schedules, then polls its sources every
 * `poll` and hands new events to the engine. Errors are sorted as grammY does: 401 stops this
 * bot (and says why), transient failures back off doubling, anything else is logged and traced.
 * One bot's failure never touches another.
 */
export class BotRunner {
  status: RunnerStatus = 'starting';
  message = '';
  me?: UserRef;
  /** When the last poll finished (clock ms), if one has. */
  lastPollAt?: number;
  /** Polls finished since the start. */
  polls = 0;
  private readonly ac = new AbortController();
  private loop?: Promise<void>;
  private engine?: Engine;
  private state?: BotState;
  private api?: Client;
  private readonly inflight = new Set<Promise<void>>();
  private readonly cleanups: Array<() => void> = [];
  private polling: Promise<void> | undefined;
  private readonly contacts = new Map<string, boolean>();
  private ready!: () => void;
  /** Resolves when the bot has started (or could not). */
  readonly started = new Promise<void>((r) => (this.ready = r));

  constructor(private readonly o: RunnerOptions) {}

  get name(): string {
    return this.o.bot.name;
  }

  start(): void {
    this.loop = this.main().catch((err) => {
      this.fail(`stopped by an unexpected error: ${(err as Error).message}`);
      this.o.log.error({ err }, 'bot stopped by an unexpected error');
    });
  }

  /** Stops polling and waits for runs to reach a step boundary (they resume at the next start). */
  async stop(): Promise<void> {
    this.ac.abort();
    for (const c of this.cleanups.splice(0)) c();
    await this.loop;
    await Promise.allSettled([...this.inflight]);
    await this.o.traces.flush();
    if (this.status !== 'failed') this.status = 'stopped';
  }

  /** Polls now (tests, `pinbot bots` tools) and waits until the events it found are handled or parked. */
  async pollNow(): Promise<void> {
    await this.started;
    await this.pollOnce();
    // on a virtual clock: until everything woken has settled (runs parked on the clock do not count)
    if (this.o.clock instanceof VirtualClock) await this.o.clock.settle();
    else await this.idle();
  }

  /** Resolves when nothing is being polled or run (runs waiting on time do not count). */
  async idle(): Promise<void> {
    await this.started;
    for (;;) {
      if (this.polling) await this.polling;
      await this.engine?.idle();
      if (!this.polling) return;
    }
  }

  private fail(message: string): void {
    this.status = 'failed';
    this.message = message;
    this.ac.abort();
    this.ready();
  }

  private async main(): Promise<void> {
    // held work until the bot runs (a virtual clock's advance waits for it), but not while it
    // waits for its user
    const hold = () => this.o.clock.hold(`bot ${this.o.bot.name}: start`);
    let release = hold();
    try {
      if (!(await this.begin(() => release(), () => (release = hold())))) return;
    } finally {
      release();
    }
    await this.pollLoop();
  }

  /** Identity, state, resumed events, startup, schedules. False when the bot cannot run. */
  private async begin(pause: () => void, resume: () => void): Promise<boolean> {
    const { bot, log } = this.o;
    const signal = this.ac.signal;
    let identity: { api: Client; me: UserRef } | undefined;
    for (let attempt = 1; !identity && !signal.aborted; attempt++) {
      try {
        identity = await this.o.identify(signal);
      } catch (err) {
        if (signal.aborted) return this.ready(), false;
        if (err instanceof UnauthorizedError) return this.unauthorized(), false;
        const waiting = err instanceof IdentityPending;
        this.status = 'waiting';
        this.message = waiting ? err.message : `cannot reach the server: ${(err as Error).message}`;
        if (attempt === 1 || !waiting) log.warn(`bot ${bot.name} is waiting: ${this.message}`);
        this.ready();
        pause();
        await this.o.clock.sleep(Math.min(60_000, (waiting ? bot.pollMs : 1000) * 2 ** Math.min(attempt - 1, 6)), signal).catch(() => undefined);
        resume();
      }
    }
    if (!identity) return this.ready(), false;
    this.api = identity.api;
    this.me = identity.me;
    let store = await this.o.openStore();
    if (this.o.dryRun) {
      // a dry run works on a copy: it polls and evaluates for real but persists nothing
      const copy = new MemoryStore();
      await new BotState(store, bot.name).copyTo(copy);
      store = copy;
    }
    this.state = new BotState(store, bot.name);
    this.engine = new Engine({
      bot,
      state: this.state,
      api: identity.api,
      me: identity.me,
      traces: this.o.traces,
      log,
      clock: this.o.clock,
      dryRun: this.o.dryRun,
      signal,
      isContact: (pin) => this.isContact(pin),
      onUnauthorized: () => this.unauthorized(),
      retryBaseMs: this.o.retryBaseMs,
      stepTimeoutMs: this.o.stepTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS,
    });
    const boots = await this.state.boot(bot.spec.vars ?? {});
    for (const entry of this.state.inbox()) this.dispatch(entry);
    const ruleIds = (name: string) => bot.rules.filter((r) => r.enabled && r.triggers.some((t) => t.def.name === name));
    for (const rule of bot.rules.filter((r) => r.enabled)) {
      for (const t of rule.triggers) {
        const off = t.def.setup?.({ bot: bot.name, ruleId: rule.id, scheduler: this.o.scheduler, clock: this.o.clock, emit: (e) => this.emit(e, false), push: (e) => this.push(t.def.name, e), log }, t.options);
        if (off) this.cleanups.push(off);
      }
    }
    if (ruleIds('startup').length) await this.emit({ key: `startup:${boots}`, type: 'startup', payload: { at: new Date(this.o.clock.now()).toISOString(), boot: boots } }, false);
    this.status = 'running';
    this.message = `as ${identity.me.display_name} (${identity.me.pin_code})${this.o.dryRun ? ', dry run' : ''}`;
    log.info({ user: identity.me.pin_code, dryRun: this.o.dryRun, sources: bot.sources }, `bot ${bot.name} running ${this.message}`);
    this.ready();
    return true;
  }

  /**
   * Polls every `poll` on the clock. The waits are heartbeats: a virtual clock fires them only
   * once something changed, so advancing a month costs a few polls, not half a million. After
   * a failed poll the wait doubles (to 5 minutes).
   */
  private async pollLoop(): Promise<void> {
    const { bot, clock } = this.o;
    const signal = this.ac.signal;
    if (bot.sources.length === 0) return;
    let failures = 0;
    // many bots of one server should not poll in step (real time only: virtual runs stay repeatable)
    let first = this.o.jitter !== false && !clock.virtual;
    while (!signal.aborted) {
      const t0 = clock.now();
      const ok = await this.pollOnce();
      failures = ok ? 0 : failures + 1;
      let wait = failures ? Math.min(300_000, bot.pollMs * 2 ** failures) : bot.pollMs - (clock.now() - t0);
      if (first) wait = Math.random() * bot.pollMs;
      first = false;
      await clock.sleep(Math.max(0, wait), signal, { heartbeat: failures === 0 }).catch(() => undefined);
    }
  }

  private unauthorized(): void {
    const msg = 'the server refused the API key (401): check key:, or whether the key was revoked. Fix the file and it reloads.';
    this.o.log.error(`bot ${this.name} stopped: ${msg}`);
    this.fail(msg);
  }

  /** One poll: sources → one write (cursors + new events) → the engine. False when a source failed. */
  private pollOnce(): Promise<boolean> {
    if (!this.state || !this.api || !this.me || this.ac.signal.aborted) return Promise.resolve(true);
    if (this.polling) return this.polling.then(() => true);
    const state = this.state;
    let ok = true;
    const run = async () => {
      if (this.inflight.size >= (this.o.maxBacklog ?? 1000)) return; // let the backlog drain first
      this.contacts.clear(); // `from: contacts` answers hold for the events of one poll
      let release: (() => void) | undefined;
      try {
        // each source holds itself while it runs (poller.ts); the results are held from here
        const out = await pollSources(this.o.bot, this.o.registry, state, { api: this.api!, me: this.me!, signal: this.ac.signal, log: this.o.log, clock: this.o.clock, bot: this.o.bot.name, store: state.store }, this.o.stepTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS);
        release = this.o.clock.hold(`bot ${this.o.bot.name}: poll results`);
        for (const e of out.errors) {
          ok = false;
          if (!this.ac.signal.aborted) this.o.log[isTransient(e.error) ? 'warn' : 'error']({ source: e.source, err: (e.error as Error).message }, `polling ${e.source} failed; backing off`);
        }
        if (this.ac.signal.aborted) return;
        // an idle poll writes nothing: only cursors that moved go to the store
        const moved = Object.fromEntries(Object.entries(out.cursors).filter(([source, c]) => JSON.stringify(c) !== JSON.stringify(state.cursor(source))));
        const created = Object.keys(moved).length || out.events.length ? await state.commit(moved, out.events) : [];
        for (const entry of created) this.dispatch(entry);
        this.lastPollAt = this.o.clock.now();
        this.polls++;
      } catch (err) {
        ok = false;
        if (err instanceof UnauthorizedError) return this.unauthorized();
        if (!this.ac.signal.aborted) this.o.log.error({ err }, 'poll failed');
      } finally {
        release?.();
      }
    };
    this.polling = run().finally(() => (this.polling = undefined));
    return this.polling.then(() => ok);
  }

  private dispatch(entry: InboxEntry): void {
    const p = this.engine!.handle(entry).catch((err) => this.o.log.error({ err, event: entry.key }, 'event handling failed'));
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }

  /** Queues an event that did not come from polling (schedule, startup) and waits for its runs to settle. */
  private async emit(e: Omit<BotEvent, 'at'>, wait = true): Promise<void> {
    if (!this.state || this.ac.signal.aborted) return;
    const created = await this.state.commit({}, [{ ...e, at: this.o.clock.now() }]);
    for (const entry of created) this.dispatch(entry);
    if (wait) await this.engine!.idle();
  }

  /**
   * Queues an event pushed from outside (a plugin's push source) through the same inbox as
   * polled ones, exactly once per key (see BotState.push). False for a duplicate, or when the
   * bot is not running.
   */
  private async push(source: string, e: Omit<BotEvent, 'at'>): Promise<boolean> {
    if (!this.state || this.ac.signal.aborted) return false;
    const entry = await this.state.push(`push:${source}`, { ...e, at: this.o.clock.now() });
    if (entry) this.dispatch(entry);
    return !!entry;
  }

  private async isContact(pin: string): Promise<boolean> {
    const hit = this.contacts.get(pin);
    if (hit !== undefined) return hit;
    const { is_contact } = await this.api!.contacts.check(pin, { signal: this.ac.signal });
    this.contacts.set(pin, is_contact);
    return is_contact;
  }
}
