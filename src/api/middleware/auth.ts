import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ReadView } from '../../store/core/types.js';
import { authenticate, type KeyUsage } from '../../domain/users/keys.js';
import type { Clock } from '../../clock/clock.js';
import { ApiError } from '../errors.js';

/** The key presented by `X-API-Key` or `Authorization: Bearer`. Internal. */
export function presentedKey(req: Request): string | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header) return header.trim();
  const auth = req.headers.authorization;
  const m = auth ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
  return m ? m[1] : undefined;
}

/**
 * Resolves the caller from the key; 401 `unauthorized` with `WWW-Authenticate: Bearer`
 * otherwise. A failure first passes `failures` (the per-address `anonymous` limiter), which
 * answers 429 instead once the address has failed too often. With `refresh` (several processes
 * share the store), a key not found here is looked up once more after catching up with the
 * database: it may have been created a moment ago through another process.
 */
export function authMiddleware(
  db: ReadView,
  usage: KeyUsage,
  clock: Clock,
  failures: RequestHandler = (_req, _res, next) => next(),
  refresh?: () => Promise<void>,
) {
  const fail = (req: Request, res: Response, next: NextFunction) => {
    res.setHeader('WWW-Authenticate', 'Bearer realm="pinbot"');
    failures(req, res, (err?: unknown) => next(err ?? new ApiError('unauthorized')));
  };
  const pass = (req: Request, found: NonNullable<ReturnType<typeof authenticate>>, next: NextFunction) => {
    usage.touch(found.key.id, clock.now());
    req.user = found.user;
    // its writes are made with this key (api/request-context.ts)
    req.keyId = found.key.id;
    next();
  };
  return (req: Request, res: Response, next: NextFunction) => {
    const key = presentedKey(req);
    const found = key ? authenticate(db, key) : undefined;
    if (found) return pass(req, found, next);
    if (!key || !refresh) return fail(req, res, next);
    refresh().then(
      () => {
        const again = authenticate(db, key);
        if (again) pass(req, again, next);
        else fail(req, res, next);
      },
      (err: unknown) => next(err),
    );
  };
}
