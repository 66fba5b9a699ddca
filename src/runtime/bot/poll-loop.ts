import type { Logger } from 'pino';
import { UnauthorizedError } from '../../client/errors.js';
import type { Release } from '../../clock/clock.js';
import { Serial } from '../../util/serial.js';
import { withStepTimeout } from '../../util/step-timeout.js';
import type { CompiledBot } from '../define/bot.js';
import type { Registry } from '../contract/registry.js';
import type { BotState } from '../state/bot-state.js';
import type { BotEvent, SourceContext } from '../contract/types.js';
import { PollTimers } from './poll-timers.js';
import { metrics } from '../../telemetry/metrics.js';
import { activeContext, inSpan, markSpan, rememberCause, tracingOn, type Context } from '../../telemetry/tracing.js';

/** What one poll of one source found. */
export interface SourceResult {
  name: string;
  cursor: unknown;
  events: BotEvent[];
}

export interface PollLoopOptions {
  bot: CompiledBot;
  registry: Registry;
  state: BotState;
  /** What sources are given (their signal is the bot's; each poll gets its own under the timeout). */
  ctx: SourceContext;
  /** Working time a source's poll may take (`runtime.step_timeout`). */
  timeoutMs: number;
  /** Milliseconds between two polls of a source when nothing wakes it. */
  intervalOf(source: string): number;
  /**
   * False for a source that nothing wakes (it reads outside pinbot): its cadence timer must
   * fire on a virtual clock too, so it is not a heartbeat. Default: every source is woken.
   */
  wakeable?(source: string): boolean;
  /** With `jitter`: the first polls are spread over this (default: each source's interval). */
  firstSpreadMs?: number;
  /** Sources whose first poll waits for a wake (or their interval) rather than going at once. */
  deferFirst?(source: string): boolean;
  /**
   * Writes the results of sources that answered together (cursors and events in one write) and
   * hands the new events on. A source is polled again only once its result is delivered.
   */
  deliver(results: SourceResult[]): Promise<void>;
  /** A source failed (it backs off); a 401 is passed on too. */
  onError(source: string, err: unknown): void;
  /** Spread the first polls over the interval (real clocks: many bots do not poll in step). */
  jitter?: boolean;
  /**
   * How long an answer waits for the other sources polled with it, so events found together are
   * handled in server time order across sources (default 200 ms). A source that is slower
   * (paced by the rate budget, backing off) does not hold the others back longer than this.
   */
  orderWindowMs?: number;
  /** True while polling should wait (the backlog of unhandled events is too long). */
  paused?(): boolean;
  log: Logger;
}

/** Longest backoff of a failing source. */
const MAX_BACKOFF_MS = 300_000;
/**
 * The first retry of a failed poll: soon, as a dropped connection or a server restarting is
 * usually over by then (the bots' clients make no retries of their own: the poll loop owns a
 * poll's). Each next wait is four times the one before (2 s, 8 s, 32 s, …, to 5 minutes),
 * whatever the source's interval: a woken source's interval is the safety poll (10 minutes),
 * and twice that after a second failure left a bot deaf once the changes that wake it stopped.
 */
export const FIRST_RETRY_MS = 500;

/** Ms until a source that failed `n` times in a row is polled again. Internal. */
function retryDelay(n: number): number {
  return Math.min(MAX_BACKOFF_MS, FIRST_RETRY_MS * 4 ** (n - 1));
}

/** While the backlog is too long (`paused`): how often the loop looks whether it has drained. */
const PAUSED_RECHECK_MS = 25;

/**
 * Polls a bot's sources, each on its own: a source is polled when it is due (its interval since
 * its last poll), when it is woken (`wake`: the embedded server saw a change that concerns the
 * bot), or on `pollNow`. Each source's answer is delivered as soon as it comes — together with
 * the answers of sources polled at the same moment that come within `orderWindowMs`, so events
 * found together are handled in server time order. A slow source never delays the others. A
 * failing source is polled again after FIRST_RETRY_MS, then backs off (×4 each time, to 5
 * minutes); the others go on. The loop is the one owner of a poll's retries.
 *
 * Timers are the clock's: cadence timers are heartbeats (a virtual clock fires them only after
 * something changed), wake-ups, backoff and the cadence of sources nothing wakes (`wakeable`)
 * are ordinary timers.
 */
export class PollLoop {
  private readonly sources: string[];
  private readonly due = new Map<string, number>();
  private readonly failures = new Map<string, number>();
  private readonly dirty = new Set<string>();
  private readonly inflight = new Set<string>();
  private buffer: Array<{ result: SourceResult; resolve: () => void; reject: (err: unknown) => void }> = [];
  private cancelWindow?: () => void;
  private readonly timers: PollTimers;
  /** Deliveries, one at a time, in order. */
  private readonly deliveries = new Serial();
  private idleWaiters: Array<() => void> = [];
  private stopped = false;
  private readonly wanted: Set<string>;
  /** With tracing on: the context that woke each source (its next poll's parent span). */
  private readonly wokenBy = new Map<string, Context>();

  constructor(private readonly o: PollLoopOptions) {
    this.sources = [...o.bot.sources];
    this.timers = new PollTimers(o.ctx.clock, () => this.kick());
    this.wanted = new Set(o.bot.rules.filter((r) => r.enabled).flatMap((r) => r.triggers.map((t) => t.def.name)));
    const now = o.ctx.clock.now();
    const spread = o.jitter === true && !o.ctx.clock.virtual;
    for (const s of this.sources) {
      if (o.deferFirst?.(s)) this.due.set(s, now + o.intervalOf(s) * (spread ? 0.5 + Math.random() / 2 : 1));
      else this.due.set(s, spread ? now + Math.random() * Math.min(o.firstSpreadMs ?? Infinity, o.intervalOf(s)) : now);
    }
  }

  /** Starts polling (the sources due now go at once). */
  start(): void {
    this.kick();
  }

  stop(): void {
    this.stopped = true;
    this.timers.stop();
    this.cancelWindow?.();
  }

  /**
   * Polls these sources (all when none are named) as soon as the clock lets it: at once on a
   * real clock, at the next advance or settle on a virtual one. A source being polled right now
   * is polled again after it answers.
   */
  wake(sources?: Iterable<string>): void {
    if (this.stopped) return;
    const woken = [...(sources ?? this.sources)].filter((s) => this.due.has(s));
    // with tracing on: a span for the wake-up (a child of the commit that woke the bot), the
    // parent of the sources' next poll
    const cause = woken.length
      ? markSpan('pinbot.bot.wake', { 'pinbot.bot': this.o.bot.name, 'pinbot.sources': woken.join(',') })
      : undefined;
    for (const s of woken) {
      this.dirty.add(s);
      if (cause) this.wokenBy.set(s, cause);
    }
    if (this.dirty.size) this.timers.arm(this.o.ctx.clock.now(), false);
  }

  /** Sources woken (a change concerns them) and not polled yet: on a virtual clock they wait for it to move. */
  get woken(): number {
    return this.dirty.size;
  }

  /** Polls every source now and resolves once their results are delivered. */
  async pollNow(): Promise<void> {
    await this.whenIdle();
    for (const s of this.sources) this.dirty.add(s);
    this.kick();
    await this.whenIdle();
  }

  /** Resolves once no source is being polled or delivered. */
  whenIdle(): Promise<void> {
    if (this.inflight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** When the last poll of any source finished, if one has. */
  lastPollAt?: number;
  /** Polls finished since the start. */
  polls = 0;

  private kick(): void {
    if (this.stopped || this.o.ctx.signal.aborted) return;
    const now = this.o.ctx.clock.now();
    if (this.o.paused?.()) {
      // let the backlog drain, and look again soon: a woken source's interval is the safety
      // poll (10 minutes), and once the senders stop no change would wake it before that. A
      // heartbeat: the runs that drain the backlog commit, so a virtual clock fires it too.
      this.timers.arm(now + Math.min(PAUSED_RECHECK_MS, ...this.sources.map((s) => this.o.intervalOf(s))), true);
      return;
    }
    for (const s of this.sources) {
      const due = this.dirty.has(s) || this.due.get(s)! <= now;
      if (!due) continue;
      // a source still being polled when it falls due again goes again once it has answered
      if (this.inflight.has(s)) this.dirty.add(s);
      else this.poll(s);
    }
    this.rearm();
  }

  /** Sets the timer for the next source due (a heartbeat unless that source is woken or backing off). */
  private rearm(): void {
    const now = this.o.ctx.clock.now();
    let next = Infinity;
    let heartbeat = true;
    let nextPlain = Infinity;
    for (const s of this.sources) {
      // a source being polled has its next due time already (set when its poll started); once
      // that has passed, it goes again when it answers (kick marked it)
      if (this.inflight.has(s) && this.due.get(s)! <= now) continue;
      const woken = this.dirty.has(s) && !this.inflight.has(s);
      const at = woken ? now : this.due.get(s)!;
      const plain = woken || (this.failures.get(s) ?? 0) > 0 || this.o.wakeable?.(s) === false;
      if (plain && at < nextPlain) nextPlain = at;
      if (at < next) {
        next = at;
        heartbeat = !plain;
      } else if (at === next && plain) heartbeat = false;
    }
    // a heartbeat first may never fire on a virtual clock: what must fire later (a source
    // nothing wakes, a backoff) gets a timer of its own
    this.timers.set(next, heartbeat, heartbeat && nextPlain > next ? nextPlain : Infinity);
  }

  private poll(name: string): void {
    const { ctx, state, bot } = this.o;
    const clock = ctx.clock;
    // a poll a change woke answers something: its requests are not spread over the window
    const requestKind = this.dirty.has(name) && this.due.get(name)! > clock.now() ? 'woken' : 'poll';
    this.inflight.add(name);
    this.dirty.delete(name);
    // the poll is held work (a virtual clock's advance waits for it) until its result is delivered
    let release: Release | undefined = clock.hold(`bot ${bot.name}: poll ${name}`);
    const started = clock.now();
    // the next poll is due an interval after this one started: its timer is set now, before the
    // source reads, so a virtual clock fires it after any change made from here on
    this.due.set(name, started + this.o.intervalOf(name));
    this.timers.arm(started + this.o.intervalOf(name), (this.failures.get(name) ?? 0) === 0);
    void (async () => {
      try {
        const source = this.o.registry.sources.get(name)!;
        // under a timeout and an error boundary: a hung or throwing source fails this poll of it only
        const poll = () =>
          withStepTimeout(
            `poll source ${name}`,
            this.o.timeoutMs,
            (signal) =>
              source.poll({ ...ctx, signal, baseline: state.baseline(name), requestKind }, state.cursor(name)),
            ctx.signal,
          );
        const polled = await this.traced(name, poll);
        const at = clock.now();
        const events = polled.events.filter((e) => this.wanted.has(e.type)).map((e) => ({ ...e, at }));
        await this.arrive({ name, cursor: polled.cursor, events }, () => {
          release?.();
          release = undefined;
        });
        this.failures.set(name, 0);
        // a source that stopped at its budget with more to read goes again at once
        if (polled.more) this.dirty.add(name);
        this.lastPollAt = clock.now();
        this.polls++;
      } catch (err) {
        const n = (this.failures.get(name) ?? 0) + 1;
        this.failures.set(name, n);
        this.due.set(name, clock.now() + retryDelay(n));
        if (!ctx.signal.aborted) {
          metrics.botPollErrors.inc([bot.name, name]);
          this.o.onError(name, err);
        }
        if (err instanceof UnauthorizedError) this.stop();
      } finally {
        release?.();
        this.inflight.delete(name);
        // answers waiting for this source need not wait any longer
        if (this.buffer.length && this.pendingSources().length === 0) this.flush();
        if (this.inflight.size === 0) for (const w of this.idleWaiters.splice(0)) w();
        this.kick();
      }
    })();
  }

  /**
   * With tracing on, the poll in a span (`pinbot.bot.poll`: a child of what woke the source), and
   * each event it finds noted as caused by it (the rule runs of the event are its children).
   */
  private traced<R extends { events: ReadonlyArray<{ key: string }> }>(
    name: string,
    poll: () => Promise<R>,
  ): Promise<R> {
    const parent = this.wokenBy.get(name);
    this.wokenBy.delete(name);
    if (!tracingOn()) return poll();
    const attributes = { 'pinbot.bot': this.o.bot.name, 'pinbot.source': name, 'pinbot.woken': parent !== undefined };
    return inSpan(
      'pinbot.bot.poll',
      attributes,
      async (span) => {
        const polled = await poll();
        span?.setAttribute('pinbot.events', polled.events.length);
        const here = activeContext();
        if (here) for (const e of polled.events) rememberCause(`${this.o.bot.name}\u0000${e.key}`, here);
        return polled;
      },
      { parent },
    );
  }

  /**
   * Queues a source's result for delivery: at once when no other source is still being polled,
   * else when they have all answered or the order window has passed. While it waits it is not
   * held work (`letGo`): a virtual clock may move on to the window's end.
   */
  private arrive(result: SourceResult, letGo: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.buffer.push({ result, resolve, reject });
      if (this.pendingSources().length === 0) return this.flush();
      letGo();
      if (this.cancelWindow) return;
      const clock = this.o.ctx.clock;
      this.cancelWindow = clock.setTimer(clock.now() + (this.o.orderWindowMs ?? 200), () => {
        this.cancelWindow = undefined;
        this.flush();
      });
    });
  }

  /** Sources being polled whose answer has not come yet. Internal. */
  private pendingSources(): string[] {
    return [...this.inflight].filter((s) => !this.buffer.some((b) => b.result.name === s));
  }

  /** Delivers what is buffered, in one write, after the deliveries before it. */
  private flush(): void {
    this.cancelWindow?.();
    this.cancelWindow = undefined;
    const batch = this.buffer.splice(0);
    if (batch.length === 0) return;
    const release = this.o.ctx.clock.hold(`bot ${this.o.bot.name}: poll results`);
    this.deliveries
      .run(() => this.o.deliver(batch.map((b) => b.result)))
      .then(
        () => batch.forEach((b) => b.resolve()),
        (err) => batch.forEach((b) => b.reject(err)),
      )
      .finally(release);
  }
}
