import type { Request, RequestHandler, Response } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { Clock } from '../../clock/clock.js';
import type { BucketConfig, Config } from '../../config/schema.js';
import { parseDuration } from '../../util/duration.js';
import { ApiError } from '../errors.js';
import { ClockRateStore } from './clock-rate-store.js';

/**
 * One limiter per bucket (API.md "Rate limits"), counted per user (all keys of a user share a
 * budget), in fixed windows on the clock, with IETF `RateLimit-Policy` / `RateLimit` fields (draft-8: one entry per bucket).
 * Users named in `rate_limits.users` (by PIN or display name) have limits of their own.
 */
export function createLimiters(config: Config, clock: Clock): Record<'general' | 'messages' | 'contacts' | 'intros', RequestHandler> & { refund(req: Request, res: Response): void } {
  const stores = new Map<string, ClockRateStore>();
  const own = config.rate_limits.users ?? {};
  /** A user's own limit of a bucket (rate_limits.users, by PIN or display name). Internal. */
  const limitOf = (name: 'general' | 'messages' | 'contacts' | 'intros', fallback: number) => (req: Request) => {
    const u = req.user;
    return (u && (own[u.pin_code]?.[name] ?? own[u.display_name]?.[name])) ?? fallback;
  };
  const make = (name: 'general' | 'messages' | 'contacts' | 'intros', bucket: BucketConfig): RequestHandler => {
    if (!config.rate_limits.enabled) return (_req, _res, next) => next();
    const windowMs = parseDuration(bucket.window)!;
    const store = new ClockRateStore(clock);
    stores.set(name, store);
    return rateLimit({
      windowMs,
      limit: Object.keys(own).length ? limitOf(name, bucket.limit) : bucket.limit,
      identifier: name,
      store,
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      keyGenerator: (req: Request) => req.user!.id,
      validate: false,
      handler: (req, res, next) => {
        const reset = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime?.getTime() ?? clock.now() + windowMs;
        const retryAfter = Math.max(1, Math.ceil((reset - clock.now()) / 1000));
        res.setHeader('Retry-After', String(retryAfter));
        next(new ApiError('rate_limited', `Rate limit of the ${name} bucket (${bucket.limit} per ${bucket.window}) reached. Retry after ${retryAfter} s.`, undefined, { retry_after: retryAfter }));
      },
    });
  };
  const r = config.rate_limits;
  return {
    general: make('general', r.general),
    messages: make('messages', r.messages),
    contacts: make('contacts', r.contacts),
    intros: make('intros', r.intros),
    /**
     * Gives a request back to the `general` bucket (a 304: nothing changed, nothing sent), and
     * says so in the response's `RateLimit` field.
     */
    refund(req, res) {
      const store = stores.get('general');
      if (!store || !req.user) return;
      store.decrement(req.user.id);
      // what is left once this request is given back (other requests may have come meanwhile)
      const hits = store.get(req.user.id)?.totalHits ?? 0;
      const left = Math.max(0, limitOf('general', r.general.limit)(req) - hits);
      const field = res.getHeader('RateLimit');
      if (typeof field === 'string') res.setHeader('RateLimit', field.replace(/("general";\s*r=)(\d+)/, (_m, head: string) => `${head}${left}`));
    },
  };
}
