import type { Client } from '../../client/client.js';
import { isTransient, UnauthorizedError } from '../../client/errors.js';
import type { UserRef } from '../../client/types.js';
import { VirtualClock } from '../../clock/virtual-clock.js';
import { MemoryStore } from '../../store/core/memory-store.js';
import type { Store } from '../../store/core/types.js';
import { RuleRunner } from '../run/rule-runner.js';
import { byServerTime } from '../contract/event-order.js';
import { PollLoop, type SourceResult } from './poll-loop.js';
import { BotState, describeVarChanges, type DialogRecord, type InboxEntry } from '../state/bot-state.js';
import { BotMemory } from '../state/memory.js';
import { varsTrace } from '../state/traces.js';
import type { BotEvent } from '../contract/types.js';
import { serverOffset, type Identity } from './identity.js';
import { setUpTriggers } from './trigger-setup.js';
import { WakeUps } from './wake-ups.js';
import { DEFAULT_STEP_TIMEOUT_MS, type RunnerOptions, type RunnerStatus } from './runner-options.js';

export { IdentityPending } from './identity.js';

/**
 * Runs one bot: resolves its identity (retrying while its user does not exist), resumes the
 * events it had not finished, fires `startup`, sets up schedules, then polls its sources every
 * `poll` and hands new events to the rule runner. Errors are sorted as grammY does: 401 stops this
 * bot (and says why), transient failures back off doubling, anything else is logged and traced.
 * One bot's failure never touches another.
 */
export class BotRunner {
  status: RunnerStatus = 'starting';
  message = '';
  me?: UserRef;
  private readonly ac = new AbortController();
  private mainDone?: Promise<void>;
  private rules?: RuleRunner;
  private state?: BotState;
  private api?: Client;
  private readonly inflight = new Set<Promise<void>>();
  private readonly cleanups: Array<() => void> = [];
  private pollLoop?: PollLoop;
  /** When the sources are polled: on the cadence, or woken by changes of the bot's user. */
  private readonly wakeUps: WakeUps;
  private readonly contacts = new Map<string, boolean>();
  /** Inbox entries being handled (an entry is handed to the rule runner once at a time). */
  private readonly dispatched = new Set<string>();
  /** Entries a dialog woke while they were being handled: handed over again when that ends. */
  private readonly again = new Set<string>();
  /** The baseline this start gave the sources that had none. */
  private baselineAt?: number;
  private ready!: () => void;
  /** Resolves when the bot has started (or could not). */
  readonly started = new Promise<void>((r) => (this.ready = r));

  constructor(private readonly o: RunnerOptions) {
    this.wakeUps = new WakeUps({ bot: o.bot, registry: o.registry, changes: o.changes, safetyPollMs: o.safetyPollMs });
  }

  get name(): string {
    return this.o.bot.name;
  }

  /** The bot's API client, once its identity is known. */
  get client(): Client | undefined {
    return this.api;
  }

  /** When the last poll of a source finished (clock ms), if one has. */
  get lastPollAt(): number | undefined {
    return this.pollLoop?.lastPollAt;
  }

  /**
   * On a virtual clock (`serve --virtual-clock`): what is held until the clock moves — a change
   * that concerns the bot, whose poll is due at the next `clock advance` — said in words; else undefined.
   */
  get waitingForClock(): string | undefined {
    const n = this.o.clock.virtual && this.status === 'running' ? (this.pollLoop?.woken ?? 0) : 0;
    if (!n) return undefined;
    const what = `a change to poll (${n} source${n > 1 ? 's' : ''})`;
    return `waiting for the clock: ${what} is held until the virtual clock moves — pinbot clock advance 1s`;
  }

  /** Source polls finished since the start. */
  get polls(): number {
    return this.pollLoop?.polls ?? 0;
  }

  start(): void {
    this.mainDone = this.main().catch((err) => {
      this.fail(`stopped by an unexpected error: ${(err as Error).message}`);
      this.o.log.error({ err }, 'bot stopped by an unexpected error');
    });
  }

  /** Stops polling and waits for runs to reach a step boundary (they resume at the next start). */
  async stop(): Promise<void> {
    this.ac.abort();
    this.pollLoop?.stop();
    for (const c of this.cleanups.splice(0)) c();
    await this.mainDone;
    await Promise.allSettled([...this.inflight]);
    await this.state?.durable().catch(() => undefined);
    await this.o.traces.flush();
    if (this.status !== 'failed') this.status = 'stopped';
  }

  /**
   * Polls now (tests, `pinbot bots` tools) and waits until the events it found are handled or
   * parked.
   */
  async pollNow(): Promise<void> {
    await this.started;
    await this.pollLoop?.pollNow();
    // on a virtual clock: until everything woken has settled (runs parked on the clock do not count)
    if (this.o.clock instanceof VirtualClock) await this.o.clock.settle();
    else await this.idle();
  }

  /** Resolves when nothing is being polled or run (runs waiting on time do not count). */
  async idle(): Promise<void> {
    await this.started;
    await this.pollLoop?.whenIdle();
    await this.rules?.idle();
    // a run's last write may not wait for its fsync (an ordered store): idle is durable too
    await this.state?.durable().catch(() => undefined);
  }

  /**
   * Reclaims expired memory on the clock, every `everyMs`. A heartbeat timer: a virtual clock
   * fires it only after something changed (nothing can have been read meanwhile). Internal.
   */
  private sweepEvery(memory: BotMemory, everyMs: number): void {
    const { clock, log } = this.o;
    let cancel: (() => void) | undefined;
    const arm = () => {
      cancel = clock.setTimer(
        clock.now() + everyMs,
        () => {
          const release = clock.hold(`bot ${this.name}: memory sweep`);
          memory
            .sweep()
            .catch((err: unknown) => log.warn({ err }, 'memory sweep failed (it is tried again)'))
            .finally(() => {
              release();
              if (!this.ac.signal.aborted) arm();
            });
        },
        { heartbeat: true },
      );
    };
    arm();
    this.cleanups.push(() => cancel?.());
  }

  private fail(message: string): void {
    this.status = 'failed';
    this.message = message;
    this.ac.abort();
    this.pollLoop?.stop();
    this.ready();
  }

  private async main(): Promise<void> {
    // held work until the bot runs (a virtual clock's advance waits for it), but not while it
    // waits for its user
    const hold = () => this.o.clock.hold(`bot ${this.o.bot.name}: start`);
    let release = hold();
    try {
      if (
        !(await this.begin(
          () => release(),
          () => (release = hold()),
        ))
      )
        return;
    } finally {
      release();
    }
    this.startPolling();
  }

  /** Identity, state, resumed events, startup, schedules. False when the bot cannot run. */
  private async begin(pause: () => void, resume: () => void): Promise<boolean> {
    const identity = await this.identify(pause, resume);
    if (!identity) return false;
    this.api = identity.api;
    this.me = identity.me;
    const store = await this.openStore();
    this.state = new BotState(store, this.o.bot.name, this.o.orderedStore === true && !this.o.dryRun);
    // listen for changes before the baseline is taken: nothing between the two is missed
    const unlisten = this.wakeUps.listen({ userId: identity.me.id, ownKey: identity.keyId });
    if (unlisten) this.cleanups.push(unlisten);
    this.rules = this.ruleRunner(identity, this.state);
    const { boots, changed, varsNote } = await this.boot(identity, store);
    // dialogs whose step the bot file no longer has end; the others resume with their entries
    await this.rules.endOrphans();
    for (const entry of this.state.inbox()) this.dispatch(entry);
    await this.startTriggers(boots);
    this.running(identity, changed, varsNote);
    return true;
  }

  /**
   * Who the bot is, waiting for its user (or the server); undefined when it cannot run. Internal.
   */
  private async identify(pause: () => void, resume: () => void): Promise<Identity | undefined> {
    const waiting = (message: string) => {
      this.status = 'waiting';
      this.message = message;
      this.ready();
    };
    const identity = await this.o.identity.find({ signal: this.ac.signal, waiting, pause, resume });
    if (identity === 'unauthorized') return void this.unauthorized();
    if (!identity) return void this.ready();
    return identity;
  }

  /**
   * The store of the bot's state; a dry run works on a copy (it polls and evaluates for real but
   * persists nothing). Internal.
   */
  private async openStore(): Promise<Store> {
    const store = await this.o.openStore();
    if (!this.o.dryRun) return store;
    const copy = new MemoryStore();
    await new BotState(store, this.o.bot.name).copyTo(copy);
    return copy;
  }

  /** The rule runner of this start. Internal. */
  private ruleRunner(identity: Identity, state: BotState): RuleRunner {
    const signal = this.ac.signal;
    return new RuleRunner({
      self: {
        bot: this.o.bot,
        api: identity.api,
        me: identity.me,
        isContact: (pin) => this.isContact(pin),
        isBot: (id) => this.o.identity.isBot(id),
      },
      writes: { state, traces: this.o.traces, log: this.o.log, dryRun: this.o.dryRun },
      limits: {
        clock: this.o.clock,
        signal,
        retryBaseMs: this.o.retryBaseMs,
        stepTimeoutMs: this.o.stepTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS,
      },
      onUnauthorized: () => this.unauthorized(),
      wake: (id) => {
        const entry = this.state?.entry(id);
        if (entry && !signal.aborted) this.dispatch(entry, true);
      },
    });
  }

  /**
   * The start: the baseline of new sources, the boot count and `vars:` edits, memory aged out
   * while the bot did not run, and the inbox fed by other processes. Internal.
   */
  private async boot(identity: Identity, store: Store) {
    const { bot } = this.o;
    const state = this.state!;
    // the start is the baseline of sources not polled yet: what comes after it is not history.
    // It is compared with the server's times: in the server's clock when that one is off
    // On a real clock the millisecond of the start counts as after it (an event at the very
    // moment of the start is not lost); a virtual clock stands still, so there it is history.
    const now = this.o.clock.now();
    this.baselineAt = now + serverOffset(identity.api, now) - (this.o.clock.virtual ? 0 : 1);
    const { boots, changed } = await state.boot(bot.spec.vars ?? {}, bot.sources, this.baselineAt);
    // an edited `vars:` value wins over what the bot had: said in the start's log line and the trace
    const varsNote = changed.length ? describeVarChanges(changed) : undefined;
    if (varsNote) this.o.traces.add(varsTrace(bot, boots, now, varsNote));
    // memory aged out while the bot did not run is reclaimed now, and then every hour (or ttl)
    const memory = new BotMemory(store, bot.name, bot.memory, () => this.o.clock.now());
    await memory.sweep();
    if (bot.memory.ttlMs !== undefined) this.sweepEvery(memory, Math.min(bot.memory.ttlMs, 3_600_000));
    // what other processes queue for this bot (pushes they received) is handled here
    if (this.o.inbox)
      this.cleanups.push(
        this.o.inbox.subscribe(bot.name, (id) => {
          const entry = state.entry(id);
          if (entry && !this.ac.signal.aborted) this.dispatch(entry);
        }),
      );
    return { boots, changed, varsNote };
  }

  /** Schedules and push sources, then `startup` if a rule listens to it. Internal. */
  private async startTriggers(boots: number): Promise<void> {
    const { bot } = this.o;
    const emit = (e: Omit<BotEvent, 'at'>, fired?: { rule: string; at: number }) => this.emit(e, false, fired);
    this.cleanups.push(
      ...(await setUpTriggers({
        bot,
        state: this.state!,
        clock: this.o.clock,
        scheduler: this.o.scheduler,
        log: this.o.log,
        emit,
        push: (trigger, e) => this.push(trigger, e),
      })),
    );
    if (bot.rules.some((r) => r.enabled && r.triggers.some((t) => t.def.name === 'startup')))
      await this.emit(
        {
          key: `startup:${boots}`,
          type: 'startup',
          payload: { at: new Date(this.o.clock.now()).toISOString(), boot: boots },
        },
        false,
      );
  }

  /** The bot runs: its status, and the start's log line. Internal. */
  private running(identity: Identity, changed: unknown[], varsNote: string | undefined): void {
    const { bot } = this.o;
    this.status = 'running';
    this.message = `as ${identity.me.display_name} (${identity.me.pin_code})${this.o.dryRun ? ', dry run' : ''}`;
    const fields = {
      user: identity.me.pin_code,
      dryRun: this.o.dryRun,
      sources: bot.sources,
      ...(changed.length ? { vars: changed } : {}),
    };
    this.o.log.info(fields, `bot ${bot.name} running ${this.message}${varsNote ? `; ${varsNote}` : ''}`);
    this.ready();
  }

  /**
   * Polls the sources on the clock (see PollLoop): each every `poll`, each delivered as soon as
   * it answers. On the embedded server (`changes`) a source is polled as soon as a change of
   * its topics concerns the bot's user, and otherwise only every `runtime.safety_poll` (sources
   * without topics keep `poll`): an idle bot makes no request. The cadence timers are
   * heartbeats: a virtual clock fires them only once something changed, so advancing a month
   * costs a few polls, not half a million — except for sources that read outside pinbot
   * (`outside`: a plugin's file or feed), which no commit wakes: they keep their cadence.
   */
  private startPolling(): void {
    const { bot, clock, registry } = this.o;
    if (bot.sources.length === 0 || this.ac.signal.aborted || !this.state) return;
    const wake = this.wakeUps;
    this.pollLoop = new PollLoop({
      bot,
      registry: this.o.registry,
      state: this.state,
      ctx: {
        api: this.api!,
        me: this.me!,
        signal: this.ac.signal,
        log: this.o.log,
        clock,
        bot: bot.name,
        store: this.state.store,
      },
      timeoutMs: this.o.stepTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS,
      intervalOf: (s) => wake.intervalOf(s),
      // what reads a file or a feed is not woken by pinbot's commits: its cadence is kept
      wakeable: (s) => registry.sources.get(s)?.outside !== true,
      deliver: (results) => this.deliver(results),
      onError: (source, err) => {
        if (err instanceof UnauthorizedError) return this.unauthorized();
        this.o.log[isTransient(err) ? 'warn' : 'error'](
          { source, err: (err as Error).message },
          `polling ${source} failed; backing off`,
        );
      },
      jitter: this.o.jitter !== false,
      firstSpreadMs: Math.min(bot.pollMs, this.o.firstSpreadMs ?? Infinity),
      // a source that reads from a baseline set by this very start needs no poll until a change
      // (on a real clock: 10,000 new bots start without 10,000 polls; a virtual clock, which
      // stands still, keeps the exact first poll at the start). An older baseline (an earlier
      // start, or another process before a takeover) may have events behind it: polled now.
      deferFirst: (s) =>
        !clock.virtual &&
        wake.woken(s) &&
        registry.sources.get(s)?.readsFromBaseline === true &&
        this.state!.cursor(s) === undefined &&
        this.state!.baseline(s) === this.baselineAt,
      paused: () => this.inflight.size >= (this.o.maxBacklog ?? 1000),
      log: this.o.log,
    });
    this.pollLoop.start();
    wake.attach(this.pollLoop);
  }

  private unauthorized(): void {
    const msg =
      'the server refused the API key (401): check key:, or whether the key was revoked. Fix the file and it reloads.';
    this.o.log.error(`bot ${this.name} stopped: ${msg}`);
    this.fail(msg);
  }

  /**
   * Sources that answered together → one write (the cursors that moved and the new events, in
   * server time order) → the rule runner. An idle poll writes nothing.
   */
  private async deliver(results: SourceResult[]): Promise<void> {
    const state = this.state!;
    if (this.ac.signal.aborted) return;
    this.contacts.clear(); // `from: contacts` answers hold for the events found together
    const moved: Record<string, unknown> = {};
    const events = results.flatMap((r) => r.events).sort(byServerTime);
    for (const r of results)
      if (JSON.stringify(r.cursor) !== JSON.stringify(state.cursor(r.name))) moved[r.name] = r.cursor;
    const created = Object.keys(moved).length || events.length ? await state.commit(moved, events) : [];
    for (const entry of created) this.dispatch(entry);
  }

  /** Who is in a dialog with this bot now (`pinbot bots dialogs`). */
  dialogs(): DialogRecord[] {
    return this.rules?.dialogs() ?? [];
  }

  /** Ends a person's waiting dialogs (all, or in one conversation): `pinbot bots end-dialog`. */
  endDialogs(pin: string, conversation?: string): Promise<DialogRecord[]> {
    return this.rules?.endDialogs(pin, conversation) ?? Promise.resolve([]);
  }

  /**
   * Hands an entry to the rule runner. `again`: a dialog woke it — if the entry is being handled
   * now, it is handed over once more when that ends (the wake is not lost).
   */
  private dispatch(entry: InboxEntry, again = false): void {
    if (this.dispatched.has(entry.id)) {
      if (again) this.again.add(entry.id);
      return;
    }
    this.dispatched.add(entry.id);
    const p = this.rules!.handle(entry).catch((err) =>
      this.o.log.error({ err, event: entry.key }, 'event handling failed'),
    );
    this.inflight.add(p);
    void p.finally(() => {
      this.inflight.delete(p);
      this.dispatched.delete(entry.id);
      const next = this.again.delete(entry.id) ? this.state?.entry(entry.id) : undefined;
      if (next && !this.ac.signal.aborted) this.dispatch(next);
    });
  }

  /**
   * Queues an event that did not come from polling (schedule, startup) and waits for its runs to
   * settle.
   */
  private async emit(e: Omit<BotEvent, 'at'>, wait = true, fired?: { rule: string; at: number }): Promise<void> {
    if (!this.state || this.ac.signal.aborted) return;
    const created = await this.state.commit({}, [{ ...e, at: this.o.clock.now() }], fired);
    for (const entry of created) this.dispatch(entry);
    if (wait) await this.rules!.idle();
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
