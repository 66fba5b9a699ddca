import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The headers of every console answer: a Content-Security-Policy that allows only this origin
 * (no inline script or style, no framing, forms post only here), no caching, no referrer (a
 * sign-in link never leaks), no MIME sniffing.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; " +
    "form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** The session cookie's name. */
export const COOKIE = 'pinbot_console';

/** A cookie of the request by name. Internal. */
export function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      // a malformed escape (%, %E0%A4%A) is no session, not a failed request
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** Sets the session cookie: HttpOnly (no script reads it), SameSite=Strict, console paths only. */
export function setSessionCookie(res: ServerResponse, id: string, secure: boolean): void {
  res.setHeader(
    'Set-Cookie',
    `${COOKIE}=${encodeURIComponent(id)}; Path=/console; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`,
  );
}

/** Whether the request comes from another site (a browser says so): refused for every change. */
export function crossSite(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site'];
  return site === 'cross-site' || site === 'same-site';
}

// where the console is on by default (shared with GET /metrics)
export { hostOf, isLoopback } from '../util/loopback.js';
