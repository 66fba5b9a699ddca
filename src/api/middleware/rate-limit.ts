import type { Request, RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { Clock } from '../../clock/clock.js';
import type { BucketConfig, Config } from '../../config/schema.js';
import { parseDuration } from '../../util/duration.js';
import { ApiError } from '../errors.js';
import { ClockRateStore } from './clock-rate-store.js';

/**
 * One limiter per bucket (API.md "Rate limits"), counted per user (all keys of a user share a
 * budget), in fixed windows on the clock, with IETF `RateLimit-Policy` / `RateLimit` fields (draft-8: one entry per bucket).
 */
export function createLimiters(config: Config, clock: Clock): Record<'general' | 'messages' | 'contacts' | 'intros', RequestHandler> {
  const make = (name: string, bucket: BucketConfig): RequestHandler => {
    if (!config.rate_limits.enabled) return (_req, _res, next) => next();
    const windowMs = parseDuration(bucket.window)!;
    return rateLimit({
      windowMs,
      limit: bucket.limit,
      identifier: name,
      store: new ClockRateStore(clock),
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
  return { general: make('general', r.general), messages: make('messages', r.messages), contacts: make('contacts', r.contacts), intros: make('intros', r.intros) };
}
