import { hash } from 'node:crypto';
import type { ClientRateLimitInfo, Store as RateLimitStore } from 'express-rate-limit';
import type { Clock } from '../../clock/clock.js';
import { type Call, type Gate, gateStep, type Next, type Step } from './call.js';
import { ClockRateStore, type Window } from './clock-rate-store.js';

export interface WindowLimiterOptions {
  /** The bucket's name, as the `RateLimit` fields name it. */
  name: string;
  windowMs: number;
  /** The limit for this request's client (users may have limits of their own). */
  limit: (call: Call) => number;
  /** Whom the request is counted for (a user id, a client address). */
  key: (call: Call) => string;
  /** Where the counts live (in memory on the clock, or in a shared database). */
  store: RateLimitStore;
  clock: Clock;
  /** A store that fails lets requests through (it is shared; the store behind the API refuses them anyway). */
  passOnStoreError: boolean;
  onStoreError?: (err: unknown) => void;
  /**
   * Answers a request over the limit: `used` is the window's count with this request, `resetAt`
   * when the window ends (ms on the server's clock), if the store says.
   */
  refuse: (call: Call, next: Next, used: number, resetAt: number | undefined) => void;
}

/** Most partition keys kept; past it the cache starts again (client addresses are anyone's to choose). */
const MAX_KEYS = 10_000;

/** Fills `tails` up to `reset` (`; t=0` … `; t=RESET`) and returns the last. Internal. */
function fillTails(tails: string[], reset: number): string {
  for (let t = tails.length; t <= reset; t++) tails.push(`; t=${t}`);
  return tails[reset]!;
}

/**
 * A fixed-window rate limit over an express-rate-limit `Store` (ClockRateStore, PgRateStore),
 * answering the IETF draft-8 `RateLimit` / `RateLimit-Policy` fields as express-rate-limit's
 * `standardHeaders: 'draft-8'` does, one entry per bucket (`"general"; r=99; t=42` and
 * `"general"; q=100; w=60; pk=:…:`).
 *
 * Why not express-rate-limit's middleware itself (its stores and key helpers are still used):
 * per request it awaited four promises, read `req.ip` for a debug line nobody enabled, and
 * hashed the key for the partition key; with rate limits on, `GET /me` cost about a third more
 * CPU than with them off (bench/read, the `rate limits on` row). Here a memory store is counted
 * without a promise and a key's `RateLimit-Policy` text is made once. The seconds to reset
 * (`t=`) are now measured on the server's clock (virtual or real); express-rate-limit used the
 * wall clock, so under a virtual clock `t` was wrong.
 *
 * @example
 * const general = windowLimiter({ name: 'general', windowMs: 60_000, limit: () => 100, key: (c)
 * => c.user!.id, store, clock, passOnStoreError: false, refuse });
 */
export function windowLimiter(o: WindowLimiterOptions): Step & { gate: Gate } {
  const windowSeconds = Math.ceil(o.windowMs / 1000);
  o.store.init?.({ windowMs: o.windowMs } as Parameters<NonNullable<RateLimitStore['init']>>[0]);
  const policies = new Map<string, { limit: number; text: string }>();
  /** `"name"; q=LIMIT; w=SECONDS; pk=:…:`, made once per key and limit. */
  const policyOf = (key: string, limit: number) => {
    const known = policies.get(key);
    if (known?.limit === limit) return known.text;
    // the partition key as express-rate-limit gives it: 12 hex characters of the key's SHA-256, in base64
    const pk = Buffer.from(hash('sha256', key, 'hex').slice(0, 12)).toString('base64');
    const text = `"${o.name}"; q=${limit}; w=${windowSeconds}; pk=:${pk}:`;
    if (policies.size >= MAX_KEYS) policies.clear();
    policies.set(key, { limit, text });
    return text;
  };

  // the `RateLimit` text without a template per request: its head is the bucket's, and the
  // `; t=SECONDS` tail is made once per number of seconds (at most the window's, kept up to an hour)
  const fieldHead = `"${o.name}"; r=`;
  const tails: string[] = [];
  const tailOf = (reset: number): string => {
    if (reset > 3600) return `; t=${reset}`;
    return tails[reset] ?? fillTails(tails, reset);
  };

  /** Counts the call against its window: true when it is within the limit, else it is refused (false). */
  const counted = (
    call: Call,
    end: Next,
    key: string,
    totalHits: number,
    resetAt: number | undefined,
    now?: number,
    window?: Window,
  ): boolean => {
    const limit = o.limit(call);
    // the first bucket of a call sets the fields, a later one adds its entry (node's appendHeader
    // on a field not yet set checks the name and value twice: once itself, once in setHeader)
    const first = call.buckets++ === 0;
    if (!call.res.headersSent) {
      const reset =
        resetAt !== undefined ? Math.max(0, Math.ceil((resetAt - (now ?? o.clock.now())) / 1000)) : windowSeconds;
      const field = fieldHead + (totalHits < limit ? limit - totalHits : 0) + tailOf(reset);
      // a window in memory keeps its policy text (a new window, or a new limit, looks it up again)
      let policy: string;
      if (window !== undefined && window.policyLimit === limit) policy = window.policy;
      else {
        policy = policyOf(key, limit);
        if (window !== undefined) {
          window.policy = policy;
          window.policyLimit = limit;
        }
      }
      if (first) {
        call.setField('RateLimit', field);
        call.setField('RateLimit-Policy', policy);
      } else {
        call.appendField('RateLimit', field);
        call.appendField('RateLimit-Policy', policy);
      }
    }
    if (totalHits <= limit) return true;
    o.refuse(call, end, totalHits, resetAt);
    return false;
  };
  /** A store that failed: the call passes (a shared store, logged) or ends with the error. */
  const failed = (end: Next, err: unknown): boolean => {
    if (!o.passOnStoreError) {
      end(err);
      return false;
    }
    o.onStoreError?.(err);
    return true;
  };

  // the clock's own store is counted in place: no promise, no Date, no object per request
  const local = o.store instanceof ClockRateStore ? o.store : undefined;
  const gate: Gate = (call, end) => {
    const key = o.key(call);
    if (local) {
      const hit = local.hit(key);
      // the time it was counted at is the time the reset is measured from (one clock read)
      return counted(call, end, key, hit.totalHits, hit.resetAt, local.lastNow, hit);
    }
    let hits: ClientRateLimitInfo | Promise<ClientRateLimitInfo>;
    try {
      hits = o.store.increment(key);
    } catch (err) {
      return failed(end, err);
    }
    // a store in memory answers at once: no promise, no turn of the event loop
    if (!(hits instanceof Promise)) return counted(call, end, key, hits.totalHits, hits.resetTime?.getTime());
    return hits.then(
      (h) => counted(call, end, key, h.totalHits, h.resetTime?.getTime()),
      (err: unknown) => failed(end, err),
    );
  };
  return Object.assign(gateStep(gate), { gate });
}
