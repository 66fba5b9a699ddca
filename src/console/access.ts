import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock/clock.js';

/** A signed-in browser: its CSRF token and the note shown once on its next page. */
export interface ConsoleSession {
  id: string;
  csrf: string;
  flash?: { ok: boolean; text: string };
  /** When it was last used (ms on the access's clock): idle longer than `idleMs`, it is gone. */
  seen: number;
}

/** How the console is reached and how long a session may sit unused. */
export interface AccessOptions {
  /** How long a sign-in link stays usable (ms). */
  ttlMs: number;
  /** How long a session may go unused before it ends (ms). */
  idleMs: number;
  /**
   * The one host name sessions work on (a per-run `<random>.localhost`), or undefined for any.
   * Cookies are not scoped by port: one set for 127.0.0.1 goes to every listener of 127.0.0.1.
   * One set for a name nobody else knows goes nowhere else.
   */
  host?: string;
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
 * server stops or they go unused for `idleMs`, and work only on `host` when one is given.
 *
 * @example const a = new ConsoleAccess(systemClock, { ttlMs: 600_000, idleMs: 1_800_000 });
 * const { token } = a.issueLink(); const s = a.redeem(token);
 */
export class ConsoleAccess {
  private readonly links = new Map<string, number>();
  private readonly sessions = new Map<string, ConsoleSession>();

  constructor(
    private readonly clock: Clock,
    private readonly o: AccessOptions,
  ) {}

  /** The host name sessions work on, if they are bound to one. */
  get host(): string | undefined {
    return this.o.host;
  }

  /** Whether a request naming `host` may have a session (the bound name, in any case). Internal. */
  private onHost(host: string | undefined): boolean {
    return this.o.host === undefined || (host ?? '').toLowerCase() === this.o.host;
  }

  /** A new single-use sign-in token and when it expires (ms). */
  issueLink(): { token: string; expiresAt: number } {
    const t = token();
    const expiresAt = this.clock.now() + this.o.ttlMs;
    this.links.set(hash(t), expiresAt);
    while (this.links.size > MAX_LINKS) this.links.delete(this.links.keys().next().value!);
    return { token: t, expiresAt };
  }

  /** Whether `presented` is a sign-in token that would sign in now (nothing is used up). */
  linkValid(presented: unknown): boolean {
    if (typeof presented !== 'string' || presented.length > 100) return false;
    const expiresAt = this.links.get(hash(presented));
    return expiresAt !== undefined && this.clock.now() <= expiresAt;
  }

  /** Exchanges a sign-in token for a new session; undefined when unknown, used or expired. */
  redeem(presented: string): ConsoleSession | undefined {
    if (typeof presented !== 'string' || presented.length > 100) return undefined;
    const h = hash(presented);
    const expiresAt = this.links.get(h);
    if (expiresAt === undefined) return undefined;
    this.links.delete(h); // single use, also when it has expired
    if (this.clock.now() > expiresAt) return undefined;
    const s: ConsoleSession = { id: token(), csrf: token(), seen: this.clock.now() };
    this.sessions.set(hash(s.id), s);
    while (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    return s;
  }

  /**
   * The session of a session cookie's value on a request naming `host` (the Host header's name):
   * none on another host name when sessions are bound to one, none once idle for `idleMs` (it
   * ends then). Using it keeps it alive unless `peek`.
   */
  session(id: string | undefined, host: string | undefined, peek = false): ConsoleSession | undefined {
    if (!id || id.length > 100 || !this.onHost(host)) return undefined;
    const h = hash(id);
    const s = this.sessions.get(h);
    if (!s) return undefined;
    const now = this.clock.now();
    if (now - s.seen > this.o.idleMs) {
      this.sessions.delete(h);
      return undefined;
    }
    if (!peek) s.seen = now;
    return s;
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
