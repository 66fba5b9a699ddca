import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The headers of every console answer: a Content-Security-Policy that allows only this origin
 * (no inline script or style, no framing, forms post only here), no caching, no referrer (a
 * sign-in link never leaks), no MIME sniffing.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
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
  res.setHeader('Set-Cookie', `${COOKIE}=${encodeURIComponent(id)}; Path=/console; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`);
}

/** Whether the request comes from another site (a browser says so): refused for every change. */
export function crossSite(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site'];
  return site === 'cross-site' || site === 'same-site';
}

/** Whether a host is a loopback address (the console is on by default only there). */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h) || h === '::ffff:127.0.0.1';
}

/** The host name of a Host header (`[::1]:3000` → `::1`, `localhost:3000` → `localhost`). */
export function hostOf(header: string | undefined): string {
  const h = (header ?? '').trim();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') > 0 ? h.indexOf(']') : undefined);
  return h.replace(/:\d*$/, '');
}
