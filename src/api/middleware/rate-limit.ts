import type { Request, RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import type { Clock } from '../../clock/clock.js';
import type { BucketConfig, Config } from '../../config/schema.js';
import { parseDuration } from '../../util/duration.js';
import { ApiError } from '../errors.js';
import { ClockRateStore } from './clock-rate-store.js';
import { quietLine } from './request-log.js';

/** The buckets counted per user (API.md "Rate limits"), and `anonymous`, counted per client address. */
export type LimiterName = 'general' | 'messages' | 'contacts' | 'intros' | 'groups' | 'anonymous';

/**
 * One limiter per bucket (API.md "Rate limits"), in fixed windows on the clock, with IETF
 * `RateLimit-Policy` / `RateLimit` fields (draft-8: one entry per bucket). The user buckets
 * count per user (all keys of a user share a budget). `anonymous` counts per client address
 * (IPv6 per /56) the requests that present no valid key and those to unknown routes outside
 * /api/v1: it is applied where those fail, so a request with a valid key never counts against
 * it, and a flood without one is refused before it costs more than a lookup. Past the first
 * refusal of a window, refused anonymous requests are not logged one by one (request-log's
 * `quietLine`).
 */
export function createLimiters(config: Config, clock: Clock): Record<LimiterName, RequestHandler> {
  const make = (name: LimiterName, bucket: BucketConfig): RequestHandler => {
    if (!config.rate_limits.enabled) return (_req, _res, next) => next();
    const windowMs = parseDuration(bucket.window)!;
    const perAddress = name === 'anonymous';
    return rateLimit({
      windowMs,
      limit: bucket.limit,
      identifier: name,
      store: new ClockRateStore(clock),
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      keyGenerator: perAddress ? (req: Request) => ipKeyGenerator(req.ip ?? 'unknown') : (req: Request) => req.user!.id,
      validate: false,
      handler: (req, res, next) => {
        const info = (req as Request & { rateLimit?: { resetTime?: Date; used?: number } }).rateLimit;
        const reset = info?.resetTime?.getTime() ?? clock.now() + windowMs;
        const retryAfter = Math.max(1, Math.ceil((reset - clock.now()) / 1000));
        if (perAddress && (info?.used ?? 0) > bucket.limit + 1) quietLine(res);
        res.setHeader('Retry-After', String(retryAfter));
        const what = perAddress ? `requests without a valid API key from your address (${bucket.limit} per ${bucket.window})` : `the ${name} bucket (${bucket.limit} per ${bucket.window})`;
        next(new ApiError('rate_limited', `Rate limit of ${what} reached. Retry after ${retryAfter} s.`, undefined, { retry_after: retryAfter }));
      },
    });
  };
  const r = config.rate_limits;
  return {
    general: make('general', r.general),
    messages: make('messages', r.messages),
    contacts: make('contacts', r.contacts),
    intros: make('intros', r.intros),
    groups: make('groups', r.groups),
    anonymous: make('anonymous', r.anonymous),
  };
}
