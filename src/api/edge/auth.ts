import type { IncomingMessage } from 'node:http';
import type { ReadView } from '../../store/core/types.js';
import { authenticateDigest, type KeyUsage, type KeyUse, keyDigest, authChecker } from '../../domain/users/keys.js';
import type { Clock } from '../../clock/clock.js';
import type { Call, Gate, Next, Step } from './call.js';
import { ApiError } from '../errors.js';

/** Whether a string starts and ends with a printable ASCII character (no whitespace for `trim` to take). Internal. */
function untrimmed(s: string): boolean {
  const first = s.charCodeAt(0);
  const last = s.charCodeAt(s.length - 1);
  return first > 0x20 && first < 0x7f && last > 0x20 && last < 0x7f;
}

/** The key presented by `X-API-Key` or `Authorization: Bearer`. Internal. */
export function presentedKey(req: IncomingMessage): string | undefined {
  const header = req.headers['x-api-key'];
  // node's parser has already taken the spaces around a value: `trim` only when one is left
  if (typeof header === 'string' && header) return untrimmed(header) ? header : header.trim();
  const auth = req.headers.authorization;
  const m = auth ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
  return m ? m[1] : undefined;
}

/** What a key found: its record and its user's. */
type Found = NonNullable<ReturnType<typeof authenticateDigest>>;

/**
 * The last key-shaped key a connection presented, its digest, and what it found when it was
 * last looked up (checked again on every request: domain/users/keys.ts `authChecker`).
 * Internal.
 */
interface Seen {
  key: string;
  digest: string;
  found: Found | undefined;
  /** The pending use of the key it found (KeyUsage.use): a use is recorded without a map lookup. */
  use: KeyUse | undefined;
}

/**
 * Whether two strings are equal, in a time that depends only on their lengths (no early exit
 * at the first difference). Internal.
 */
function sameKey(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * The entry of the key a call presents (its digest: domain/users/keys.ts `keyDigest`), or
 * undefined when it is not key-shaped. A client sends the same key on every request of a
 * keep-alive connection, so the last key of each connection, its digest and what it found are
 * kept while the connection is open (one entry a socket, gone with it; `server.max_connections`
 * bounds them): the SHA-256 is computed once a connection and key, not once a request (2–3% of
 * `GET /me`'s CPU, bench/read). The key stays in memory as long as its connection (not beyond:
 * no table of keys outlives them) and is compared in constant time, so a connection that a proxy
 * shares between clients tells nothing of the last one's key. Internal.
 */
export function connectionEntry(seen: WeakMap<object, Seen>, call: Call, key: string): Seen | undefined {
  const socket = call.req.socket;
  const last = socket ? seen.get(socket) : undefined;
  if (last !== undefined && sameKey(last.key, key)) return last;
  const digest = keyDigest(key);
  if (digest === undefined) return undefined;
  const entry: Seen = last ?? { key, digest, found: undefined, use: undefined };
  entry.key = key;
  entry.digest = digest;
  entry.found = undefined;
  entry.use = undefined;
  if (socket && last === undefined) seen.set(socket, entry);
  return entry;
}

/**
 * What the key of `entry` finds now: the records it found before while they are still the
 * stored ones (two reads by id: a revoked key, a rotated key or a changed user is a new record
 * or none, and is looked up again at once), else a lookup by its digest. Internal.
 */
function lookUp(db: ReadView, still: (found: Found) => boolean, entry: Seen): Found | undefined {
  const before = entry.found;
  if (before !== undefined && still(before)) return before;
  const found = authenticateDigest(db, entry.digest);
  // the pending use kept is that of the key found (the same key: the same record id)
  if (found?.key.id !== before?.key.id) entry.use = undefined;
  return (entry.found = found);
}

/**
 * Resolves the caller from the key (a gate: api/edge/call.ts `Gate`); 401 `unauthorized` with
 * `WWW-Authenticate: Bearer` otherwise. A failure first passes `failures` (the per-address
 * `anonymous` limiter), which answers 429 instead once the address has failed too often. With
 * `refresh` (several processes share the store), a key not found here is looked up once more
 * after catching up with the database: it may have been created a moment ago through another
 * process.
 */
export function authGate(
  db: ReadView,
  usage: KeyUsage,
  clock: Clock,
  failures: Step = (_call, next) => next(),
  refresh?: () => Promise<void>,
): Gate {
  const fail = (call: Call, end: Next): false => {
    call.setField('WWW-Authenticate', 'Bearer realm="pinbot"');
    failures(call, (err?: unknown) => end(err ?? new ApiError('unauthorized')));
    return false;
  };
  const pass = (call: Call, found: Found, entry: Seen): true => {
    // the key's pending use, kept with the connection until a flush takes it
    let use = entry.use;
    if (use === undefined || use.flushed) use = entry.use = usage.use(found.key.id);
    use.at = clock.now();
    call.user = found.user;
    // its writes are made with this key: the cause of their commits
    call.keyId = found.key.id;
    return true;
  };
  const seen = new WeakMap<object, Seen>();
  const still = authChecker(db);
  return (call, end) => {
    const key = presentedKey(call.req);
    const entry = key ? connectionEntry(seen, call, key) : undefined;
    const found = entry !== undefined ? lookUp(db, still, entry) : undefined;
    if (found) return pass(call, found, entry!);
    if (entry === undefined || !refresh) return fail(call, end);
    return refresh().then(() => {
      const again = lookUp(db, still, entry);
      return again ? pass(call, again, entry) : fail(call, end);
    });
  };
}
