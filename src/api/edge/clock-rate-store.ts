import type { ClientRateLimitInfo, Options, Store } from 'express-rate-limit';
import type { Clock } from '../../clock/clock.js';

/** A client's window in a ClockRateStore (read it at once: the next hit changes it). */
export interface Window {
  readonly totalHits: number;
  readonly resetAt: number;
  /**
   * What the window limiter answers this window's client with (its `RateLimit-Policy` text,
   * and the limit it says), kept with the window: no lookup of it per request
   * (api/edge/window-limiter.ts). Empty and -1 until the limiter sets them.
   */
  policy: string;
  policyLimit: number;
}

/**
 * The hit counts of one rate-limit bucket, in fixed windows measured on the clock (so a
 * virtual clock moves them too). A window starts at a client's first hit and lasts `windowMs`,
 * as express-rate-limit's own memory store does; expired entries are swept as the map grows,
 * never by a timer.
 */
export class ClockRateStore implements Store {
  readonly localKeys = true;
  private windowMs = 60_000;
  /** The windows by client (a Window whose count the store changes). */
  private readonly hits = new Map<string, { -readonly [K in keyof Window]: Window[K] }>();
  private sweepAt = 1024;
  /** The clock's time at the last `hit` (what the window limiter measures the reset from). */
  lastNow = 0;

  constructor(private readonly clock: Clock) {}

  init(options: Options): void {
    this.windowMs = options.windowMs;
  }

  get(key: string): ClientRateLimitInfo | undefined {
    const e = this.hits.get(key);
    if (!e || e.resetAt <= this.clock.now()) return undefined;
    return { totalHits: e.totalHits, resetTime: new Date(e.resetAt) };
  }

  increment(key: string): ClientRateLimitInfo {
    const e = this.hit(key);
    return { totalHits: e.totalHits, resetTime: new Date(e.resetAt) };
  }

  /**
   * Counts a hit and returns the key's window itself (read it at once: the next hit changes
   * it) — what api/edge/window-limiter.ts reads per request, without a Date or an object.
   */
  hit(key: string): Window {
    const now = this.clock.now();
    this.lastNow = now;
    let e = this.hits.get(key);
    if (!e || e.resetAt <= now) {
      e = { totalHits: 0, resetAt: now + this.windowMs, policy: '', policyLimit: -1 };
      this.hits.set(key, e);
      if (this.hits.size >= this.sweepAt) this.sweep(now);
    }
    e.totalHits++;
    return e;
  }

  decrement(key: string): void {
    const e = this.hits.get(key);
    if (e && e.totalHits > 0) e.totalHits--;
  }

  resetKey(key: string): void {
    this.hits.delete(key);
  }

  resetAll(): void {
    this.hits.clear();
  }

  /** Drops expired windows; the next sweep waits until the map has doubled. Internal. */
  private sweep(now: number): void {
    for (const [k, e] of this.hits) if (e.resetAt <= now) this.hits.delete(k);
    this.sweepAt = Math.max(1024, this.hits.size * 2);
  }
}
