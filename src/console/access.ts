import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock/clock.js';

/** A signed-in browser: its CSRF token and the note shown once on its next page. */
export interface ConsoleSession {
  id: string;
  csrf: string;
  flash?: { ok: boolean; text: string };
}

/** At most this many links and sessions are kept (the oldest go): nothing outside grows memory. */
const MAX_LINKS = 20;
const MAX_SESSIONS = 20;

const token = () => randomBytes(32).toString('base64url');
const hash = (t: string) => createHash('sha256').update(t).digest('hex');

/**
 * Who may use the console: one-time sign-in links (made through the admin socket, which only the
 * operator reaches) exchanged for a session, and the session's CSRF token. Links are kept as
 * hashes, expire after `ttlMs` on `clock` and work once; sessions live in memory until the
 * server stops.
 *
 * @example const a = new ConsoleAccess(systemClock, 600_000); const { token } = a.issueLink(); const s = a.redeem(token);
 */
export class ConsoleAccess {
  private readonly links = new Map<string, number>();
  private readonly sessions = new Map<string, ConsoleSession>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  /** A new single-use sign-in token and when it expires (ms). */
  issueLink(): { token: string; expiresAt: number } {
    const t = token();
    const expiresAt = this.clock.now() + this.ttlMs;
    this.links.set(hash(t), expiresAt);
    while (this.links.size > MAX_LINKS) this.links.delete(this.links.keys().next().value!);
    return { token: t, expiresAt };
  }

  /** Exchanges a sign-in token for a new session; undefined when unknown, used or expired. */
  redeem(presented: string): ConsoleSession | undefined {
    if (typeof presented !== 'string' || presented.length > 100) return undefined;
    const h = hash(presented);
    const expiresAt = this.links.get(h);
    if (expiresAt === undefined) return undefined;
    this.links.delete(h); // single use, also when it has expired
    if (this.clock.now() > expiresAt) return undefined;
    const s: ConsoleSession = { id: token(), csrf: token() };
    this.sessions.set(hash(s.id), s);
    while (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    return s;
  }

  /** The session of a session cookie's value. */
  session(id: string | undefined): ConsoleSession | undefined {
    return id && id.length <= 100 ? this.sessions.get(hash(id)) : undefined;
  }

  /** Whether `presented` is the session's CSRF token (compared in constant time). */
  csrfOk(s: ConsoleSession, presented: unknown): boolean {
    if (typeof presented !== 'string') return false;
    // compared as bytes: a token of as many characters but not ASCII has more bytes (and
    // timingSafeEqual throws on buffers of different lengths)
    const given = Buffer.from(presented);
    const expected = Buffer.from(s.csrf);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  /** Signs every browser out (the server stops). */
  clear(): void {
    this.sessions.clear();
    this.links.clear();
  }
}
