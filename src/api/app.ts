import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import type { DomainEnv } from '../domain/env.js';
import { KeyUsage } from '../domain/users/keys.js';
import type { Store } from '../store/core/types.js';
import { bindConfig } from './config-bound.js';
import { ApiError } from './errors.js';
import { authMiddleware } from './middleware/auth.js';
import { errorHandler, retryAfterSeconds, sendJson } from './middleware/error-handler.js';
import { Idempotency } from './middleware/idempotency.js';
import { ChangeCounters } from './middleware/change-counters.js';
import { etagOf, matchesAny, notModified } from './middleware/etag.js';
import { ValidatorMemo } from './middleware/validator-memo.js';
import { opaquePathSegments } from './middleware/path-segments.js';
import { createLimiters, type RateStoreFactory } from './middleware/rate-limit.js';
import { requestLog } from './middleware/request-log.js';
import { buildOpenApi } from './openapi.js';
import type { RouteDef } from './route.js';
import { allRoutes } from './routes.js';
import { check, compileBody, compileStrings } from './validation.js';

export interface AppOptions {
  store: Store;
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

/** Request bodies: JSON only, at most 100 kB (API.md "Errors"), whatever the Content-Type says. */
const jsonBody = express.json({ limit: '100kb', type: () => true, strict: true });

/** The query schema of routes that take none (one object: ajv caches compiled schemas by identity). Internal. */
const NO_QUERY = { type: 'object', additionalProperties: false, properties: {} };

/**
 * Builds the express app of the API: logging with request ids, auth, rate limits, JSON parsing
 * (100 kB), schema validation, idempotent writes, the error catalogue, `/healthz` and
 * `/openapi.json`.
 *
 * @example
 * const { app } = createApp({ store, env: { clock: systemClock, config }, log });
 * await supertest(app).get('/healthz').expect(200);
 */
export function createApp({ store, env, log, keyUsage = new KeyUsage(), routes = allRoutes, shared }: AppOptions) {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // Which address is the client's (req.ip: the anonymous rate limit counts per address).
  app.set('trust proxy', env.config.server.trust_proxy);
  const idempotency = new Idempotency(store, env.clock);
  const openapi = buildOpenApi(routes, env.config);
  const limiters = createLimiters(env.config, env.clock, shared?.rateStore);
  // conditional reads: a matching tag is answered from the memo while no commit concerns the
  // user, without building the body (a flood of 304s must not cost a list build each)
  const counters = ChangeCounters.of(store);
  const memo = new ValidatorMemo();
  /** A 304 for a tag the client holds: given back to `general`, counted against `conditional`. Internal. */
  const unchanged = async (req: Request, res: Response, tag: string) => {
    limiters.refund(req, res);
    await new Promise<void>((resolve, reject) => void limiters.conditional(req, res, (err?: unknown) => (err ? reject(err) : resolve())));
    res.setHeader('ETag', tag);
    res.statusCode = 304;
    res.end();
  };

  app.use(requestLog(log));
  // `Date` is the server's clock (virtual or real): clients such as remote bots read the time
  // of the server they talk to from it
  app.use((_req, res, next) => {
    res.setHeader('Date', new Date(env.clock.now()).toUTCString());
    next();
  });

  // Paths other services serve beside the API (plugins' routes under /plugins/): behind the
  // same edge — request id and log line above, and the anonymous limit, since no key is needed
  // to reach them. An answer under 400 is given back to it (a signed delivery is not a failed
  // attempt), so a flood of refused requests gets 429 as on /api/v1 and real senders do not.
  const mounts: Mount[] = [];
  app.use((req, res, next) => {
    const m = mounts.length ? mounts.find((x) => under(req.url, x.prefix)) : undefined;
    if (!m) return next();
    // as on /api/v1, a request with valid credentials is never limited by the anonymous budget
    // (a console's live pages hold their connection open: each would hold a unit of it)
    if (m.authenticated?.(req)) return void m.handler(req, res);
    limiters.anonymous(req, res, (err?: unknown) => {
      if (err) return next(err);
      res.once('finish', () => res.statusCode < 400 && limiters.giveBack('anonymous', req));
      m.handler(req, res);
    });
  });

  // Load balancers and monitors read this: 503 while the store cannot write (reads still work).
  app.get('/healthz', (_req, res) => {
    const h = store.health?.() ?? { writable: true };
    if (h.writable) {
      res.json({ status: 'ok' });
      return;
    }
    res.setHeader('Retry-After', retryAfterSeconds(h.retryAfterMs));
    res.status(503).json({ status: 'degraded', store: { writable: false, reason: h.reason, since: new Date(h.since).toISOString(), retry_after_s: Number(retryAfterSeconds(h.retryAfterMs)) } });
  });
  const openapiText = JSON.stringify(openapi);
  app.get('/openapi.json', (_req, res) => {
    sendJson(res, 200, openapiText);
  });

  const api = express.Router();
  api.use(authMiddleware(store.read, keyUsage, env.clock, limiters.anonymous, shared ? () => store.durable() : undefined));
  api.use(limiters.general);
  api.use(opaquePathSegments());

  for (const route of routes) {
    const bind = <T>(s: T) => bindConfig(s, env.config);
    const body = route.schemas.body ? compileBody(bind(route.schemas.body)) : undefined;
    const query = compileStrings(bind(route.schemas.query ?? NO_QUERY));
    const params = route.schemas.params ? compileStrings(bind(route.schemas.params)) : undefined;
    const when = route.bucketWhen ?? {};
    const buckets = (route.buckets ?? []).filter((b) => !when[b]).map((b) => limiters[b]);
    const bodyBuckets = (route.buckets ?? []).flatMap((b) => {
      const holds = when[b];
      return holds ? [(req: Request, res: Response, next: NextFunction) => (holds(req.body) ? limiters[b](req, res, next) : next())] : [];
    });
    // The body is read only once the route is known (an unknown route is 404 whatever its
    // body) and after the rate limits (a rejected request costs no parsing), but for the
    // buckets that depend on the body.
    const parse = route.method === 'post' ? [jsonBody] : [];
    api[route.method](route.path, ...buckets, ...parse, ...bodyBuckets, async (req: Request, res: Response) => {
      const ctxParams = { ...req.params };
      if (params) check(params, 'params', ctxParams);
      const ctxQuery = { ...(req.query as Record<string, unknown>) };
      check(query, 'query', ctxQuery);
      let ctxBody: unknown = req.body;
      if (route.method === 'post') {
        if (ctxBody === undefined) ctxBody = {};
        if (body) check(body, 'body', ctxBody);
      }
      const ctx = { user: req.user!, body: ctxBody, query: ctxQuery, params: ctxParams, env, db: store.read };
      if (!route.write) {
        const ifNoneMatch = req.get('if-none-match');
        // `*` says nothing of what the client holds: it is answered, and counted, like any read
        const holds = route.etag === true && ifNoneMatch !== undefined && !matchesAny(ifNoneMatch);
        const version = counters && route.etag && !route.etagSeesClock ? counters.version(req.user!.id) : undefined;
        if (holds && version !== undefined) {
          const tag = memo.current(req.user!.id, req.originalUrl, version);
          if (tag !== undefined && notModified(ifNoneMatch, tag)) {
            await unchanged(req, res, tag);
            return;
          }
        }
        const r = route.handler(ctx);
        const text = JSON.stringify(r.body);
        await store.durable();
        if (route.etag && r.status === 200) {
          const tag = etagOf(text);
          if (version !== undefined) memo.remember(req.user!.id, req.originalUrl, version, tag);
          if (holds && notModified(ifNoneMatch, tag)) {
            await unchanged(req, res, tag);
            return;
          }
          res.setHeader('ETag', tag);
          if (notModified(ifNoneMatch, tag)) {
            res.statusCode = 304; // `*`: counted against general like the read it is
            res.end();
            return;
          }
        }
        sendJson(res, r.status, text);
        return;
      }
      const key = route.method === 'post' ? req.get('idempotency-key') : undefined;
      const out = await idempotency.run(req, req.user!.id, key, (tx) => route.handler({ ...ctx, tx }));
      if (out.replayed) res.setHeader('Idempotent-Replayed', 'true');
      sendJson(res, out.status, out.body);
    });
  }
  // express would answer OPTIONS itself with a text/plain list of methods; this API has no CORS,
  // so OPTIONS is an unknown route like any other (JSON out, always).
  api.options(/.*/, (_req, _res, next) => next(new ApiError('not_found')));
  app.use('/api/v1', api);

  // Unknown routes outside /api/v1 need no key, so they count against the anonymous budget.
  app.use(
    (req, res, next) => (req.user ? next() : limiters.anonymous(req, res, next)),
    (_req, _res, next) => next(new ApiError('not_found')),
  );
  app.use(errorHandler());

  /** Serves `prefix` (e.g. `/plugins/`) with `handler`, behind the edge above. */
  const mount = (prefix: string, handler: Mount['handler'], authenticated?: Mount['authenticated']) => void mounts.push({ prefix, handler, authenticated });
  return { app, idempotency, keyUsage, openapi, mount };
}
