import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ReadView } from '../../store/types.js';
import { authenticate, type KeyUsage } from '../../domain/users/keys.js';
import type { Clock } from '../../clock/clock.js';
import { ApiError } from '../errors.js';

/** The key presented by `X-API-Key` or `Authorization: Bearer`. Internal. */
export function presentedKey(req: Request): string | undefined {
  const header = req.get('x-api-key');
  if (header) return header.trim();
  const auth = req.get('authorization');
  const m = auth ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
  return m ? m[1] : undefined;
}

/**
 * Resolves the caller from the key; 401 `unauthorized` with `WWW-Authenticate: Bearer`
 * otherwise. A failure first passes `failures` (the per-address `anonymous` limiter), which
 * answers 429 instead once the address has failed too often.
 */
export function authMiddleware(db: ReadView, usage: KeyUsage, clock: Clock, failures: RequestHandler = (_req, _res, next) => next()) {
  return (req: Request, res: Response, next: NextFunction) => {
    const key = presentedKey(req);
    const found = key ? authenticate(db, key) : undefined;
    if (!found) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="pinbot"');
      failures(req, res, (err?: unknown) => next(err ?? new ApiError('unauthorized')));
      return;
    }
    usage.touch(found.key.id, clock.now());
    req.user = found.user;
    next();
  };
}
