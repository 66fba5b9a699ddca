import PQueue from 'p-queue';
import { parseRateLimitHeaders } from './rate-limit-headers.js';
import { sleep as realSleep, type SleepFn } from './sleep.js';

/**
 * Polls are background reads, paced over the window; `woken` polls answer a change the server
 * reported (they share the polls' part of the budget but are not spread out); actions are what
 * a bot does (they go first and get the reserve).
 */
export type RequestKind = 'poll' | 'woken' | 'action';

/** What the budget knows of one bucket, from the last response that reported it. */
export interface BucketState {
  limit?: number;
  windowMs?: number;
  remaining: number;
  /** Local time (ms) at which the window resets. */
  resetAt: number;
  /** Polls counted per owner (bot) in this window, for the fair share. Internal. */
  owners?: Map<string, number>;
  /** What the last answer said was left, when it was a 304 (to see whether 304s are counted). Internal. */
  after304?: number;
  /** Actions this budget sent in this window. Internal. */
  actions?: number;
}

/** A bucket's window turned over: the per-window counts start again. Internal. */
function newWindow(b: BucketState): void {
  b.owners?.clear();
  b.actions = 0;
}

export interface RateBudgetOptions {
  /** Share of each bucket that polls may use; the rest is kept for actions. */
  share?: number;
  /** Requests in flight at once. */
  concurrency?: number;
  now?: () => number;
  sleep?: SleepFn;
}

/**
 * The request budget of one identity (all of a user's keys share the server's count).
 * Learns each bucket's quota and what is left from the `RateLimit` headers, paces polls to
 * `share` of every bucket (with a small burst), keeps the rest for actions, and after a 429
 * holds every request on that bucket until `Retry-After` has passed. Several bots of one user
 * share it fairly: when polls wait for room, the owner (bot) that has polled least in the
 * window goes first, so a bot with many sources cannot starve one with few.
 *
 * @example
 * const budget = createRateBudget({ share: 0.5 });
 * const res = await budget.run({ kind: 'poll', buckets: ['general'] }, () => fetch(url));
 * budget.observe(res.headers);
 */
export interface RateBudget {
  run<T>(
    req: { kind: RequestKind; buckets: readonly string[]; signal?: AbortSignal; owner?: string },
    fn: () => Promise<T>,
  ): Promise<T>;
  /**
   * Updates buckets from a response's headers; returns the bucket names it reported.
   * `notModified`: it was a 304. While the server gives 304s back (pinbot does), polls are not
   * spread over the window, only held to their share: an unchanged list costs nothing, and the
   * budget goes where the events are.
   */
  observe(headers: { get(name: string): string | null }, opts?: { notModified?: boolean }): string[];
  /** After a 429: nothing more on these buckets for `ms`. */
  block(buckets: readonly string[], ms: number): void;
  /** A copy of what is known, by bucket name. */
  state(): Record<string, BucketState>;
}

/** Creates a budget (see RateBudget). */
export function createRateBudget(options: RateBudgetOptions = {}): RateBudget {
  return new Budget(options);
}

/** The budget of one identity (see RateBudget). Internal. */
class Budget implements RateBudget {
  private readonly buckets = new Map<string, BucketState>();
  private readonly queue: PQueue;
  /** Owners with a poll waiting for room, and how many. */
  private readonly waiting = new Map<string, number>();
  /**
   * Whether the server answers 304s that cost nothing: then polls are only held to their share,
   * not spread over the window — an unchanged list costs nothing, and a changed one is where the
   * events are. Set by the first 304; cleared for good when two 304s in a row show them counted.
   */
  private free304 = false;
  private counts304 = false;
  private readonly share: number;
  private readonly now: () => number;
  private readonly sleep: SleepFn;

  constructor({ share = 0.5, concurrency = 4, now = Date.now, sleep = realSleep }: RateBudgetOptions) {
    this.share = share;
    this.now = now;
    this.sleep = sleep;
    this.queue = new PQueue({ concurrency });
  }

  async run<T>(
    req: { kind: RequestKind; buckets: readonly string[]; signal?: AbortSignal; owner?: string },
    fn: () => Promise<T>,
  ): Promise<T> {
    await this.waitForRoom(req.kind, req.buckets, req.signal, req.owner);
    return this.queue.add(fn, { priority: req.kind === 'poll' ? 0 : 1, signal: req.signal }) as Promise<T>;
  }

  observe(headers: { get(name: string): string | null }, opts: { notModified?: boolean } = {}): string[] {
    const t = this.now();
    const names: string[] = [];
    if (opts.notModified) this.free304 = true;
    for (const r of parseRateLimitHeaders(headers)) {
      names.push(r.name);
      const b = this.buckets.get(r.name) ?? { remaining: r.remaining ?? r.limit ?? 1, resetAt: t + 60_000 };
      // a 304 that leaves less than the 304 before it was counted: this server charges for them
      if (
        opts.notModified &&
        r.remaining !== undefined &&
        b.after304 !== undefined &&
        r.remaining < b.after304 &&
        r.resetSec !== undefined &&
        t + r.resetSec * 1000 <= b.resetAt + 1000
      )
        this.counts304 = true;
      b.after304 = opts.notModified ? r.remaining : undefined;
      if (r.limit !== undefined) b.limit = r.limit;
      if (r.windowSec !== undefined) b.windowMs = r.windowSec * 1000;
      if (r.remaining !== undefined) b.remaining = r.remaining;
      if (r.resetSec !== undefined) {
        const at = t + r.resetSec * 1000;
        if (at > b.resetAt + 1000) newWindow(b); // the server started a new window
        b.resetAt = at;
      }
      this.buckets.set(r.name, b);
    }
    return names;
  }

  block(names: readonly string[], ms: number): void {
    const t = this.now();
    for (const n of names) {
      const b = this.buckets.get(n) ?? { remaining: 0, resetAt: t };
      b.remaining = 0;
      b.resetAt = Math.max(b.resetAt, t + ms);
      this.buckets.set(n, b);
    }
  }

  state(): Record<string, BucketState> {
    return Object.fromEntries([...this.buckets].map(([k, { owners: _owners, ...v }]) => [k, v]));
  }

  /** Ms to wait before a request of `kind` may use bucket `b`; 0 when it may go now. */
  private delay(kind: RequestKind, b: BucketState): number {
    const t = this.now();
    if (t >= b.resetAt) {
      // The window has turned over: assume a full quota until the next answer says otherwise.
      b.remaining = b.limit ?? Math.max(b.remaining, 1);
      b.resetAt = t + (b.windowMs ?? 60_000);
      newWindow(b);
    }
    if (kind === 'action' || b.remaining <= 0) return b.remaining > 0 ? 0 : b.resetAt - t;
    const limit = b.limit ?? b.remaining;
    const quota = Math.floor(limit * this.share);
    // what polls have used: everything counted in this window but this budget's own actions
    // (actions spend the other part of the bucket; they do not eat the polls' share)
    const used = limit - b.remaining - (b.actions ?? 0);
    if (used >= quota) return b.resetAt - t;
    if (kind === 'woken' || (this.free304 && !this.counts304) || !b.windowMs || !b.limit) return 0;
    // Pace: the poll share spreads over the window, with a burst of a fifth of it.
    const elapsed = Math.max(0, b.windowMs - (b.resetAt - t));
    const burst = Math.max(2, Math.floor(quota / 5));
    const allowed = (quota * elapsed) / b.windowMs + burst;
    if (used < allowed) return 0;
    const needElapsed = ((used - burst + 1) * b.windowMs) / quota;
    return Math.min(b.resetAt - t, Math.max(1, needElapsed - elapsed));
  }

  /**
   * When polls wait for room: ms `owner` should let pass because another waiting owner has polled
   * less in this window (it goes first); 0 when `owner` may go.
   */
  private yieldTo(owner: string | undefined, names: readonly string[]): number {
    if (owner === undefined || this.waiting.size === 0) return 0;
    for (const n of names) {
      const b = this.buckets.get(n);
      if (!b?.owners || !b.limit || !b.windowMs) continue;
      const mine = b.owners.get(owner) ?? 0;
      for (const other of this.waiting.keys()) {
        if (other !== owner && (b.owners.get(other) ?? 0) < mine)
          return Math.max(1, Math.floor(b.windowMs / Math.max(1, b.limit * this.share)));
      }
    }
    return 0;
  }

  /** Waits until every bucket of `names` has room for a request of `kind`, then counts it. */
  private async waitForRoom(kind: RequestKind, names: readonly string[], signal?: AbortSignal, owner?: string) {
    let queued = false;
    try {
      for (;;) {
        let wait = 0;
        for (const n of names) {
          const b = this.buckets.get(n);
          if (b) wait = Math.max(wait, this.delay(kind, b));
        }
        if (wait <= 0 && kind === 'poll') wait = this.yieldTo(owner, names);
        if (wait <= 0) break;
        if (!queued && owner !== undefined && kind === 'poll') {
          queued = true;
          this.waiting.set(owner, (this.waiting.get(owner) ?? 0) + 1);
        }
        await this.sleep(wait, signal);
      }
    } finally {
      if (queued) {
        const n = this.waiting.get(owner!)! - 1;
        if (n > 0) this.waiting.set(owner!, n);
        else this.waiting.delete(owner!);
      }
    }
    this.count(kind, names, owner);
  }

  /** Counts a request at once, so concurrent callers do not all see the same room. */
  private count(kind: RequestKind, names: readonly string[], owner?: string): void {
    for (const n of names) {
      const b = this.buckets.get(n);
      if (!b) continue;
      b.remaining = Math.max(0, b.remaining - 1);
      if (kind === 'action') b.actions = (b.actions ?? 0) + 1;
      if (kind !== 'action' && owner !== undefined) (b.owners ??= new Map()).set(owner, (b.owners.get(owner) ?? 0) + 1);
    }
  }
}
