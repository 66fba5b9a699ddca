import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { systemClock } from '../clock/clock.js';
import type { Logger } from 'pino';
import type { DomainEnv } from '../domain/env.js';
import { KeyUsage } from '../domain/users/keys.js';
import type { CommitFeed } from '../store/core/commit-signal.js';
import type { Store } from '../store/core/types.js';
import { ApiError } from './errors.js';
import { authMiddleware } from './middleware/auth.js';
import { errorHandler, retryAfterSeconds, sendJson } from './middleware/error-handler.js';
import { Idempotency } from './middleware/idempotency.js';
import { ChangeCounters } from './middleware/change-counters.js';
import { ValidatorMemo } from './middleware/validator-memo.js';
import { createLimiters, type RateStoreFactory } from './middleware/rate-limit.js';
import { requestLog } from './middleware/request-log.js';
import { buildOpenApi } from './openapi.js';
import type { RouteDef } from './route.js';
import { requestClasses } from './request-classes.js';
import { compileRoute } from './route-pipeline.js';
import { RouteTable } from './route-table.js';
import { allRoutes } from './routes.js';
import { recordRequest } from '../telemetry/http-metrics.js';

export interface AppOptions {
  store: Store;
  /**
   * The store's commits (`observeCommits`, or the deployment's): conditional reads are answered
   * from per-user change counters that these move.
   */
  commits: CommitFeed;
  env: DomainEnv;
  log: Logger;
  keyUsage?: KeyUsage;
  /** The /api/v1 routes (default: `allRoutes`); tests pass their own. */
  routes?: readonly RouteDef[];
  /**
   * Several processes share the store (PostgreSQL): rate limits count in `rateStore`, and an
   * unknown key is looked up again after catching up with the other processes' writes.
   */
  shared?: { rateStore: RateStoreFactory };
}

/** A path prefix served by another service (plugins' routes). Internal. */
interface Mount {
  prefix: string;
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** A request the service authenticates itself (a console session): not an anonymous one. */
  authenticated?: (req: IncomingMessage) => boolean;
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
 * The part of a request URL under `/api/v1` (matched in any case, by whole segments, as the
 * express mount did), `'/'` for `/api/v1` itself, or undefined for other URLs. Internal.
 */
function underApi(url: string): string | undefined {
  if (!url.startsWith('/api/v1') && !API_PREFIX.test(url)) return undefined;
  const q = url.indexOf('?', 7);
  const path = q === -1 ? url.slice(7) : url.slice(7, q);
  if (path === '') return '/';
  return path.startsWith('/') ? path : undefined;
}

/**
 * A request target in absolute form (`GET http://host/api/v1/me`, which HTTP/1.1 servers must
 * take) as its path and query, as express's router read it; anything else as sent; undefined
 * for an absolute form that is no URL (`http://[::1/api/v1/me`), which express's router would
 * throw on before any middleware ran (a 500 with no request id, log line or rate limit). Internal.
 */
function originForm(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.pathname + u.search : url;
  } catch {
    return /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? undefined : url;
  }
}

/** Requests whose target was a malformed absolute form: the front answers them 400. Internal. */
const malformedTargets = new WeakSet<IncomingMessage>();

/**
 * Puts an absolute-form target in origin form before express's router parses it; a malformed
 * one becomes `/` and is marked, so that it reaches the front (its request id, log line and the
 * anonymous limit) and is answered 400 `malformed_request` there. Internal.
 */
function frontTarget(req: IncomingMessage): void {
  const url = req.url ?? '/';
  if (url.startsWith('/')) return;
  const origin = originForm(url);
  if (origin !== undefined) {
    req.url = origin;
    return;
  }
  malformedTargets.add(req);
  (req as Request).originalUrl = url; // logged as sent
  req.url = '/';
}

/**
 * The `Date` header of the server's clock: the same string for a whole second, made once (the
 * contract's "Date follows the server's clock", without a Date object per request). Internal.
 */
function dateHeader(now: () => number): () => string {
  let second = NaN;
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
 * Builds the express app of the API: logging with request ids, auth, rate limits, JSON parsing
 * (100 kB), schema validation, idempotent writes, the error catalogue, `/healthz` and
 * `/openapi.json`.
 *
 * @example
 * const { app } = createApp({ store, env: { clock: systemClock, config }, log });
 * await supertest(app).get('/healthz').expect(200);
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: longer than 80 lines before the rule; to split (issue 28 item 4)
export function createApp({
  store,
  commits,
  env,
  log,
  keyUsage = new KeyUsage(),
  routes = allRoutes,
  shared,
}: AppOptions) {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // Which address is the client's (req.ip: the anonymous rate limit counts per address).
  app.set('trust proxy', env.config.server.trust_proxy);
  const idempotency = new Idempotency(store, env.clock);
  const openapi = buildOpenApi(routes, env.config);
  const limiters = createLimiters(env.config, env.clock, shared?.rateStore, (err, bucket) =>
    log.error({ err, bucket }, 'rate limit store failed: the request was let through'),
  );
  // conditional reads: a matching tag is answered from the memo while no commit concerns the
  // user, without building the body (a flood of 304s must not cost a list build each)
  const deps = { store, env, limiters, idempotency, counters: ChangeCounters.of(commits), memo: new ValidatorMemo() };
  const table = new RouteTable(
    routes.map((route) => ({ method: route.method, path: route.path, value: compileRoute(route, deps) })),
  );
  const logRequest = requestLog(log, env.config.metrics.enabled === false ? undefined : recordRequest);
  // `Date` is the server's clock (virtual or real): clients such as remote bots read the time
  // of the server they talk to from it. On the system clock node's own header says the same.
  const date = env.clock === systemClock ? undefined : dateHeader(() => env.clock.now());
  const authenticate = authMiddleware(
    store.read,
    keyUsage,
    env.clock,
    limiters.anonymous,
    shared ? () => store.durable() : undefined,
  );
  const general = limiters.enabled.general ? limiters.general : undefined;

  /** A request under /api/v1 once authenticated and counted: its route, or 404. Internal. */
  const route = (req: Request, res: Response, next: NextFunction, path: string) => {
    const found = table.match(req.method, path);
    // OPTIONS too: this API has no CORS, so express's text/plain list of methods is not sent
    if (!found) return next(new ApiError('not_found'));
    const q = req.url.indexOf('?');
    found.value(req, res, next, found.params, q === -1 ? req.url : req.url.slice(0, q));
  };
  /** /api/v1: every request needs a key (an unknown route too) and counts against `general`. Internal. */
  const api = (req: Request, res: Response, next: NextFunction, path: string) =>
    authenticate(req, res, (err?: unknown) => {
      if (err) return next(err);
      if (!general) return route(req, res, next, path);
      void general(req, res, (e?: unknown) => (e ? next(e) : route(req, res, next, path)));
    });

  // Paths other services serve beside the API (plugins' routes under /plugins/): behind the
  // same edge — request id and log line, and the anonymous limit, since no key is needed
  // to reach them. An answer under 400 is given back to it (a signed delivery is not a failed
  // attempt), so a flood of refused requests gets 429 as on /api/v1 and real senders do not.
  const mounts: Mount[] = [];
  const mounted = (req: Request, res: Response, next: NextFunction, m: Mount) => {
    // as on /api/v1, a request with valid credentials is never limited by the anonymous budget
    // (a console's live pages hold their connection open: each would hold a unit of it)
    if (m.authenticated?.(req)) return void m.handler(req, res);
    limiters.anonymous(req, res, (err?: unknown) => {
      if (err) return next(err);
      res.once('finish', () => res.statusCode < 400 && limiters.giveBack('anonymous', req));
      m.handler(req, res);
    });
  };

  // The front of every request, in one step: its id and log line, the Date, then /api/v1 or a
  // mounted service; anything else goes on to the routes below.
  // (A metrics hook counting finished requests sits with the log line: requestLog's `close`.)
  app.use((req, res, next) => {
    logRequest(req, res);
    if (date) res.setHeader('Date', date());
    if (!req.url.startsWith('/')) frontTarget(req);
    if (malformedTargets.has(req)) {
      const target =
        'The request target is not a valid URL. Send a path such as /api/v1/me (or a valid absolute http:// URL).';
      return void limiters.anonymous(req, res, (err?: unknown) =>
        next(err ?? new ApiError('malformed_request', target)),
      );
    }
    const path = underApi(req.url);
    if (path !== undefined) return api(req, res, next, path);
    const m = mounts.length ? mounts.find((x) => under(req.url, x.prefix)) : undefined;
    if (m) return mounted(req, res, next, m);
    next();
  });

  // Load balancers and monitors read this: 503 while the store cannot write (reads still work).
  app.get('/healthz', (_req, res) => {
    const h = store.health?.() ?? { writable: true };
    if (h.writable) {
      res.json({ status: 'ok' });
      return;
    }
    res.setHeader('Retry-After', retryAfterSeconds(h.retryAfterMs));
    res.status(503).json({
      status: 'degraded',
      store: {
        writable: false,
        reason: h.reason,
        since: new Date(h.since).toISOString(),
        retry_after_s: Number(retryAfterSeconds(h.retryAfterMs)),
      },
    });
  });
  const openapiText = JSON.stringify(openapi);
  app.get('/openapi.json', (_req, res) => {
    sendJson(res, 200, openapiText);
  });

  // Unknown routes outside /api/v1 need no key, so they count against the anonymous budget.
  app.use(
    (req, res, next) => (req.user ? next() : limiters.anonymous(req, res, next)),
    (_req, _res, next) => next(new ApiError('not_found')),
  );
  const renderError = errorHandler();
  app.use(renderError);
  // requests born with express's methods skip its per-request prototype change (request-classes.ts);
  // the routes above end every request, so the router's own end is reached only by a bug
  const served = requestClasses(
    app,
    (err, req, res) => renderError(err ?? new Error('no route answered'), req, res, () => undefined),
    (req, res) => {
      // /api/v1 as sent by every client (exact case, origin form): the front step above without
      // express's router, whose layers would only lead it there (bench/read). Its errors, and a
      // route that passes the request on, end in the same error handler; anything else goes
      // through the router.
      if (!req.url.startsWith('/api/v1')) return false;
      const path = underApi(req.url);
      if (path === undefined) return false;
      const end = (err?: unknown) => renderError(err ?? new ApiError('not_found'), req, res, () => undefined);
      req.originalUrl = req.url; // what the router sets
      req.baseUrl = '';
      try {
        logRequest(req, res);
        if (date) res.setHeader('Date', date());
        api(req, res, end, path);
      } catch (err) {
        end(err);
      }
      return true;
    },
  );
  const { classes } = served;
  // a target in absolute form becomes its path first (a malformed one is marked, answered 400 at the front)
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    frontTarget(req);
    served.listener(req, res);
  };

  /** Serves `prefix` (e.g. `/plugins/`) with `handler`, behind the front above. */
  const mount = (prefix: string, handler: Mount['handler'], authenticated?: Mount['authenticated']) =>
    void mounts.push({ prefix, handler, authenticated });
  return { app, listener, classes, idempotency, keyUsage, openapi, mount };
}
