import type { NextFunction, Request, RequestHandler, Response } from 'express';
import express from 'express';
import type { DomainEnv } from '../domain/env.js';
import type { Store } from '../store/core/types.js';
import { bindConfig } from './config-bound.js';
import { sendJson } from './middleware/error-handler.js';
import type { ChangeCounters } from './middleware/change-counters.js';
import { etagOf, matchesAny, notModified } from './middleware/etag.js';
import { opaquePath } from './middleware/path-segments.js';
import type { Idempotency } from './middleware/idempotency.js';
import type { Limiters } from './middleware/rate-limit.js';
import type { ValidatorMemo } from './middleware/validator-memo.js';
import type { RouteContext, RouteDef, WriteRoute } from './route.js';
import { check, compileBody, compileStrings } from './validation.js';
import { markRoute, routeCells } from '../telemetry/http-metrics.js';
import { inSpan } from '../telemetry/tracing.js';

/** Request bodies: JSON only, at most 100 kB (API.md "Errors"), whatever the Content-Type says. */
const jsonBody = express.json({ limit: '100kb', type: () => true, strict: true });

/** The query schema of routes that take none (one object: ajv caches compiled schemas by identity). Internal. */
const NO_QUERY = { type: 'object', additionalProperties: false, properties: {} };

/** What every route's pipeline shares. */
export interface PipelineDeps {
  store: Store;
  env: DomainEnv;
  limiters: Limiters;
  idempotency: Idempotency;
  /** Per-user change counters: conditional reads are answered without a build while no commit concerns the user. */
  counters: ChangeCounters;
  memo: ValidatorMemo;
}

/**
 * One matched request through its route: `params` as matched (decoded), `path` the request's
 * path as sent (no query), which an idempotent write is keyed on.
 */
export type RouteRun = (
  req: Request,
  res: Response,
  next: NextFunction,
  params: Record<string, string>,
  path: string,
) => void;

/**
 * Runs `steps` (express middleware) in order, then `last`; the first error goes to `next`.
 * Internal.
 */
function inOrder(
  steps: readonly RequestHandler[],
  req: Request,
  res: Response,
  next: NextFunction,
  last: () => void,
): void {
  let i = 0;
  const step = (err?: unknown): void => {
    if (err) return next(err);
    const h = steps[i++];
    if (!h) return last();
    try {
      void h(req, res, step);
    } catch (e) {
      next(e);
    }
  };
  step();
}

/** What a read's answer needs of the request: what the client holds, and at which version its lists were built. Internal. */
interface ReadState {
  ifNoneMatch: string | undefined;
  holds: boolean;
  version: string | undefined;
  user: string;
}

const DONE: Promise<void> = Promise.resolve();

/** The query of a request as express's `simple` parser gives it (a fresh object: validation fills defaults in). Internal. */
function queryOf(req: Request): Record<string, unknown> {
  return req.url.includes('?') ? { ...(req.query as Record<string, unknown>) } : {};
}

/**
 * Compiles a route once, at start-up, into the function that serves it: its own rate-limit
 * buckets (those that are on), the JSON body for POSTs (read only now that the route is known
 * and the limits passed, but for buckets that depend on the body), validation of params, query
 * and body, then the handler — a read answered after the store is durable, with `ETag` and 304
 * where the route has them; a write in one transaction, idempotent with `Idempotency-Key`.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: longer than 80 lines before the rule; to split (issue 28 item 4)
export function compileRoute(route: RouteDef, deps: PipelineDeps): RouteRun {
  const { store, env, limiters, idempotency, counters, memo } = deps;
  const bind = <T>(s: T) => bindConfig(s, env.config);
  const body = route.schemas.body ? compileBody(bind(route.schemas.body)) : undefined;
  const query = compileStrings(bind(route.schemas.query ?? NO_QUERY));
  const params = route.schemas.params ? compileStrings(bind(route.schemas.params)) : undefined;
  const when = route.bucketWhen ?? {};
  const on = (b: keyof typeof when) => limiters.enabled[b];
  const buckets = (route.buckets ?? []).filter((b) => !when[b] && on(b)).map((b) => limiters[b]);
  const bodyBuckets = (route.buckets ?? []).flatMap((b) => {
    const holds = when[b];
    return holds && on(b)
      ? [(req: Request, res: Response, next: NextFunction) => (holds(req.body) ? limiters[b](req, res, next) : next())]
      : [];
  });
  const post = route.method === 'post';
  const steps = [...buckets, ...(post ? [jsonBody] : []), ...bodyBuckets];

  /** A 304 for a tag the client holds: given back to `general`, counted against `conditional`. */
  const unchanged = async (req: Request, res: Response, tag: string) => {
    limiters.refund(req, res);
    await new Promise<void>(
      (resolve, reject) => void limiters.conditional(req, res, (err?: unknown) => (err ? reject(err) : resolve())),
    );
    res.setHeader('ETag', tag);
    res.statusCode = 304;
    res.end();
  };

  /** A read's answer once what it shows is durable: with `ETag` and 304 where the route has them. */
  const answer = (req: Request, res: Response, status: number, text: string, read: ReadState): Promise<void> | void => {
    if (route.etag && status === 200) {
      const { ifNoneMatch, holds, version, user } = read;
      const tag = etagOf(text);
      if (version !== undefined) memo.remember(user, req.originalUrl, version, tag);
      if (holds && notModified(ifNoneMatch, tag)) return unchanged(req, res, tag);
      res.setHeader('ETag', tag);
      if (notModified(ifNoneMatch, tag)) {
        res.statusCode = 304; // `*`: counted against general like the read it is
        res.end();
        return;
      }
    }
    sendJson(res, status, text);
  };

  /**
   * Serves a matched request. Synchronous as far as it can be: a read of a store with nothing
   * waiting to be durable (most reads) is answered without a promise; anything that waits
   * returns one. Throws (or rejects) for the error handler.
   */
  const serve = (
    req: Request,
    res: Response,
    ctxParams: Record<string, string>,
    path: string,
  ): Promise<void> | void => {
    if (params) check(params, 'params', ctxParams);
    const ctxQuery = queryOf(req);
    check(query, 'query', ctxQuery);
    let ctxBody: unknown = req.body;
    if (post) {
      if (ctxBody === undefined) ctxBody = {};
      if (body) check(body, 'body', ctxBody);
    }
    const user = req.user!;
    const ctx = { user, body: ctxBody, query: ctxQuery, params: ctxParams, env, db: store.read };
    if (!route.write) {
      const ifNoneMatch = req.headers['if-none-match'];
      // `*` says nothing of what the client holds: it is answered, and counted, like any read
      const holds = route.etag === true && ifNoneMatch !== undefined && !matchesAny(ifNoneMatch);
      const version = route.etag && !route.etagSeesClock ? counters.version(user.id) : undefined;
      if (holds && version !== undefined) {
        const tag = memo.current(user.id, req.originalUrl, version);
        if (tag !== undefined && notModified(ifNoneMatch, tag)) return unchanged(req, res, tag);
      }
      const r = route.handler(ctx);
      const text = JSON.stringify(r.body);
      const read: ReadState = { ifNoneMatch, holds, version, user: user.id };
      // no response shows state a crash could still take back (Store.durable)
      if (store.isDurable?.()) return answer(req, res, r.status, text, read);
      return store.durable().then(() => answer(req, res, r.status, text, read));
    }
    return write(req, res, ctx, path);
  };

  /** A write: one transaction, idempotent with `Idempotency-Key`, answered once durable. */
  const write = async (req: Request, res: Response, ctx: RouteContext, path: string) => {
    const key = post ? req.headers['idempotency-key'] : undefined;
    // keyed on the path as sent (ids are opaque: see opaquePath)
    const call = { target: `${req.method} ${opaquePath(path)}`, body: req.body, keyId: req.keyId };
    // a span (with tracing on) from the transaction to its durable commit: the bots it wakes are its children
    const out = await inSpan('pinbot.store.commit', { 'pinbot.route': `/api/v1${route.path}` }, () =>
      idempotency.run(call, ctx.user.id, typeof key === 'string' ? key : undefined, (tx) =>
        (route as WriteRoute).handler({ ...ctx, tx }),
      ),
    );
    if (out.replayed) res.setHeader('Idempotent-Replayed', 'true');
    sendJson(res, out.status, out.body);
  };

  /** `serve`, its throw or rejection given to `next`. */
  const guarded = (
    req: Request,
    res: Response,
    next: NextFunction,
    p: Record<string, string>,
    path: string,
  ): Promise<void> => {
    try {
      const out = serve(req, res, p, path);
      return out ? out.catch(next) : DONE;
    } catch (err) {
      next(err);
      return DONE;
    }
  };
  // the route's label in the metrics (telemetry/http-metrics.ts): its pattern, never the path
  const cells = routeCells(`/api/v1${route.path}`);
  // a read with rate limits off has nothing before its handler
  if (steps.length === 0)
    return (req, res, next, p, path) => void (markRoute(req, cells), guarded(req, res, next, p, path));
  return (req, res, next, p, path) => (
    markRoute(req, cells), inOrder(steps, req, res, next, () => guarded(req, res, next, p, path))
  );
}
