import { ipKeyGenerator, type Store as RateLimitStore } from 'express-rate-limit';
import type { Clock } from '../../clock/clock.js';
import type { BucketConfig, Config } from '../../config/schema.js';
import { parseDuration } from '../../util/duration.js';
import { ApiError } from '../errors.js';
import { ClockRateStore } from './clock-rate-store.js';
import type { Call, Gate, Next, Step } from './call.js';
import { windowLimiter } from './window-limiter.js';
import { metrics } from '../../telemetry/metrics.js';

/** The buckets counted per user (API.md "Rate limits"), and `anonymous`, counted per client address. */
export type LimiterName = 'general' | 'messages' | 'contacts' | 'intros' | 'groups' | 'conditional' | 'anonymous';

/** The buckets a user may have limits of their own in (`rate_limits.users`). */
type UserBucket = Exclude<LimiterName, 'anonymous'>;

/**
 * One limiter per bucket (API.md "Rate limits"), in fixed windows on the clock, with IETF
 * `RateLimit-Policy` / `RateLimit` fields (draft-8: one entry per bucket). The user buckets
 * count per user (all keys of a user share a budget); users named in `rate_limits.users` (by PIN
 * or display name) have limits of their own. `anonymous` counts per client address
 * (IPv6 per /56) the requests that present no valid key and those to unknown routes outside
 * /api/v1: it is applied where those fail, so a request with a valid key never counts against
 * it, and a flood without one is refused before it costs more than a lookup. Past the first
 * refusal of a window, refused anonymous requests are not logged one by one (request-log's
 * `quietLine`).
 */
export type RateStoreFactory = (bucket: LimiterName) => RateLimitStore;

/**
 * The limiters: a middleware per bucket (a pass-through when rate limits are off), `enabled`
 * saying which count at all (a request path leaves the others out rather than calling them),
 * `refund` and `giveBack`.
 */
export type Limiters = Record<LimiterName, Step> & {
  readonly enabled: Readonly<Record<LimiterName, boolean>>;
  /** `general` as a gate (api/edge/call.ts `Gate`): a call within the limit goes on with no continuation made. */
  readonly generalGate: Gate;
  refund(call: Call): void;
  giveBack(bucket: 'anonymous', call: Call): void;
};

/**
 * `shared`: where the counts live when several processes serve one database (a store per
 * bucket, e.g. PgRateStore); by default each process counts in memory on its clock. A shared
 * store that fails lets requests through (the store behind the API refuses them anyway).
 * `refund` gives a request back to `general` (a 304: nothing changed, nothing sent); the 304
 * then counts against `conditional` instead, so conditional reads are cheap, not free.
 * `giveBack('anonymous', req)` gives one back to the address's anonymous count (a plugin route
 * that answered under 400: see api/app.ts). `onStoreError` hears of a shared store's failures.
 */
export function createLimiters(
  config: Config,
  clock: Clock,
  shared?: RateStoreFactory,
  onStoreError?: (err: unknown, bucket: LimiterName) => void,
): Limiters {
  const stores = new Map<LimiterName, RateLimitStore>();
  const own = config.rate_limits.users ?? {};
  /** A user's own limit of a bucket (rate_limits.users, by PIN or display name). Internal. */
  const limitOf = (name: UserBucket, fallback: number) => (call: Call) => {
    const u = call.user;
    return (u && (own[u.pin_code]?.[name] ?? own[u.display_name]?.[name])) ?? fallback;
  };
  const make = (name: LimiterName, bucket: BucketConfig): Step & { gate: Gate } => {
    if (!config.rate_limits.enabled) return Object.assign((_call: Call, next: Next) => next(), { gate: () => true });
    const windowMs = parseDuration(bucket.window)!;
    const perAddress = name === 'anonymous';
    const limited = metrics.rateLimited.cell(name);
    const store = shared ? shared(name) : new ClockRateStore(clock);
    stores.set(name, store);
    const limit =
      !perAddress && Object.keys(own).length ? limitOf(name as UserBucket, bucket.limit) : () => bucket.limit;
    return windowLimiter({
      name,
      windowMs,
      limit,
      key: perAddress ? (call: Call) => ipKeyGenerator(call.ip || 'unknown') : (call: Call) => call.user!.id,
      store,
      clock,
      passOnStoreError: shared !== undefined,
      onStoreError: (err) => onStoreError?.(err, name),
      refuse: (call, next, used, resetAt) => {
        const reset = resetAt ?? clock.now() + windowMs;
        const retryAfter = Math.max(1, Math.ceil((reset - clock.now()) / 1000));
        limited.value++;
        if (perAddress && used > bucket.limit + 1) call.quiet = true;
        call.setField('Retry-After', String(retryAfter));
        const what = perAddress
          ? `requests without a valid API key from your address (${bucket.limit} per ${bucket.window})`
          : `the ${name} bucket (${bucket.limit} per ${bucket.window})`;
        next(
          new ApiError('rate_limited', `Rate limit of ${what} reached. Retry after ${retryAfter} s.`, undefined, {
            retry_after: retryAfter,
          }),
        );
      },
    });
  };
  const r = config.rate_limits;
  const on = r.enabled;
  const general = make('general', r.general);
  return {
    enabled: { general: on, messages: on, contacts: on, intros: on, groups: on, conditional: on, anonymous: on },
    general,
    generalGate: general.gate,
    messages: make('messages', r.messages),
    contacts: make('contacts', r.contacts),
    intros: make('intros', r.intros),
    groups: make('groups', r.groups),
    conditional: make('conditional', r.conditional),
    anonymous: make('anonymous', r.anonymous),
    giveBack(bucket, call) {
      const store = stores.get(bucket);
      if (store) void Promise.resolve(store.decrement(ipKeyGenerator(call.ip || 'unknown'))).catch(() => undefined);
    },
    refund(call) {
      const store = stores.get('general');
      if (!store || !call.user) return;
      const key = call.user.id;
      void Promise.resolve(store.decrement(key)).catch(() => undefined);
      // what is left once this request is given back (other requests may have come meanwhile);
      // a shared store is asked nothing more: its answer would come after the headers
      const field = call.field('RateLimit');
      if (field === undefined) return;
      const hits = store instanceof ClockRateStore ? store.get(key)?.totalHits : undefined;
      const left = (n: string) =>
        hits === undefined ? Number(n) + 1 : Math.max(0, limitOf('general', r.general.limit)(call) - hits);
      call.replaceField(
        'RateLimit',
        field.replace(/("general";\s*r=)(\d+)/, (_m, head: string, n: string) => `${head}${left(n)}`),
      );
    },
  };
}
