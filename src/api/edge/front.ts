import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EdgeCall } from '../../util/http.js';
import { ApiError } from '../errors.js';
import { RouteTable } from '../route-table.js';
import { Call, type Next, type Step, type Trust } from './call.js';

/** A path prefix served by another service (plugins' routes, the console, /metrics). */
export interface Mount {
  prefix: string;
  handler: (req: IncomingMessage, res: ServerResponse, call: EdgeCall) => void;
  /** A request the service authenticates itself (a console session): not an anonymous one. */
  authenticated?: (req: IncomingMessage) => boolean;
}

/** A path the edge answers itself, without a key (`/healthz`, `/openapi.json`). */
export type ServicePath = (call: Call) => void;

/** What the front needs: the steps it runs and where an error ends. */
export interface FrontParts {
  trust: Trust;
  /** Gives the call its id and log line (api/edge/request-log.ts). */
  logRequest: (call: Call) => void;
  /** The `Date` header, when the server's clock is not the system's (a virtual clock). */
  date?: () => string;
  /** /api/v1: the call and its path under it (`/me`). */
  api: (call: Call, path: string, next: Next) => void;
  /** The anonymous limit (a request no key vouches for). */
  anonymous: Step;
  /** Gives one back to the anonymous count (a mounted service answered under 400). */
  giveBack: (call: Call) => void;
  services: ReadonlyArray<{ path: string; serve: ServicePath }>;
  mounts: readonly Mount[];
  /** Ends a call with an error (api/edge/error-answer.ts). */
  fail: (call: Call, err: unknown) => void;
}

/**
 * Whether a request URL (path and query) is under a mount's prefix, by whole path segments:
 * `/console` takes `/console`, `/console/…` and `/console?…`, not `/consoles`; a prefix ending
 * in `/` (`/plugins/`) takes what starts with it. Internal.
 */
function under(url: string, prefix: string): boolean {
  if (!url.startsWith(prefix)) return false;
  const next = url[prefix.length];
  return prefix.endsWith('/') || next === undefined || next === '/' || next === '?';
}

const API_PREFIX = /^\/api\/v1/i;

/**
 * The part of a request URL under `/api/v1` (matched in any case, by whole segments), `'/'`
 * for `/api/v1` itself, or undefined for other URLs. Internal.
 */
export function underApi(url: string): string | undefined {
  if (!url.startsWith('/api/v1') && !API_PREFIX.test(url)) return undefined;
  const q = url.indexOf('?', 7);
  const path = q === -1 ? url.slice(7) : url.slice(7, q);
  if (path === '') return '/';
  return path.startsWith('/') ? path : undefined;
}

/**
 * A request target in absolute form (`GET http://host/api/v1/me`, which HTTP/1.1 servers must
 * take) as its path and query; anything else as sent; undefined for an absolute form that is no
 * URL (`http://[::1/api/v1/me`), answered 400 `malformed_request`. Internal.
 */
function originForm(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.pathname + u.search : url;
  } catch {
    return /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? undefined : url;
  }
}

const MALFORMED =
  'The request target is not a valid URL. Send a path such as /api/v1/me (or a valid absolute http:// URL).';

/**
 * The `Date` header of the server's clock: the same string for a whole second, made once (the
 * contract's "Date follows the server's clock", without a Date object per request).
 */
export function dateHeader(now: () => number): () => string {
  let second = Number.NaN;
  let text = '';
  return () => {
    const t = now();
    const s = Math.floor(t / 1000);
    if (s !== second) {
      second = s;
      text = new Date(t).toUTCString();
    }
    return text;
  };
}

/**
 * The front of every request, in one step: the call is made, gets its id and log line and the
 * Date, then goes to /api/v1, a path the edge answers itself, a mounted service, or 404 (after
 * the anonymous limit: no key is needed to reach them). Returns node's request listener.
 */
export function front(p: FrontParts): (req: IncomingMessage, res: ServerResponse) => void {
  const paths = new RouteTable(p.services.map((s) => ({ method: 'get', path: s.path, value: s.serve })));
  const other = (call: Call, end: Next) => {
    const q = call.url.indexOf('?');
    const found = paths.match(call.method, q === -1 ? call.url : call.url.slice(0, q));
    if (found) return found.value(call);
    const m = p.mounts.length ? p.mounts.find((x) => under(call.url, x.prefix)) : undefined;
    if (m) return mounted(call, m, end);
    p.anonymous(call, (err) => end(err ?? new ApiError('not_found')));
  };
  // as on /api/v1, a request with valid credentials is never limited by the anonymous budget
  // (a console's live pages hold their connection open: each would hold a unit of it). An
  // answer under 400 is given back (a signed delivery is not a failed attempt), so a flood of
  // refused requests gets 429 as on /api/v1 and real senders do not.
  const mounted = (call: Call, m: Mount, end: Next) => {
    const { req, res } = call;
    req.url = call.url;
    if (m.authenticated?.(req)) return void m.handler(req, res, call);
    p.anonymous(call, (err) => {
      if (err) return end(err);
      res.once('finish', () => res.statusCode < 400 && p.giveBack(call));
      m.handler(req, res, call);
    });
  };
  return (req, res) => {
    const call = new Call(req, res, p.trust);
    const end: Next = (err) => p.fail(call, err ?? new ApiError('not_found'));
    try {
      p.logRequest(call);
      if (p.date) call.setField('Date', p.date());
      if (!call.url.startsWith('/')) {
        const origin = originForm(call.url);
        if (origin === undefined)
          return p.anonymous(call, (err) => end(err ?? new ApiError('malformed_request', MALFORMED)));
        call.url = call.originalUrl = origin;
      }
      const path = underApi(call.url);
      if (path !== undefined) return p.api(call, path, end);
      other(call, end);
    } catch (err) {
      end(err);
    }
  };
}
