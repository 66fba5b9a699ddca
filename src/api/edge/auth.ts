import type { IncomingMessage } from 'node:http';
import type { ReadView } from '../../store/core/types.js';
import { authenticate, type KeyUsage } from '../../domain/users/keys.js';
import type { Clock } from '../../clock/clock.js';
import type { Call, Next, Step } from './call.js';
import { ApiError } from '../errors.js';

/** The key presented by `X-API-Key` or `Authorization: Bearer`. Internal. */
export function presentedKey(req: IncomingMessage): string | undefined {
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
  failures: Step = (_call, next) => next(),
  refresh?: () => Promise<void>,
): Step {
  const fail = (call: Call, next: Next) => {
    call.res.setHeader('WWW-Authenticate', 'Bearer realm="pinbot"');
    failures(call, (err?: unknown) => next(err ?? new ApiError('unauthorized')));
  };
  const pass = (call: Call, found: NonNullable<ReturnType<typeof authenticate>>, next: Next) => {
    usage.touch(found.key.id, clock.now());
    call.user = found.user;
    // its writes are made with this key: the cause of their commits
    call.keyId = found.key.id;
    next();
  };
  return (call, next) => {
    const key = presentedKey(call.req);
    const found = key ? authenticate(db, key) : undefined;
    if (found) return pass(call, found, next);
    if (!key || !refresh) return fail(call, next);
    refresh().then(
      () => {
        const again = authenticate(db, key);
        if (again) pass(call, again, next);
        else fail(call, next);
      },
      (err: unknown) => next(err),
    );
  };
}
