import express from 'express';
import type { Logger } from 'pino';
import { systemClock } from '../clock/clock.js';
import type { DomainEnv } from '../domain/env.js';
import { KeyUsage } from '../domain/users/keys.js';
import type { CommitFeed } from '../store/core/commit-signal.js';
import type { Store } from '../store/core/types.js';
import { recordRequest } from '../telemetry/http-metrics.js';
import { retryAfterSeconds } from '../util/http.js';
import { authGate } from './edge/auth.js';
import { afterGate, type Call, compileTrust, type Gate, type Next } from './edge/call.js';
import { answerError } from './edge/error-answer.js';
import { dateHeader, front, type Mount } from './edge/front.js';
import { createLimiters, type Limiters, type RateStoreFactory } from './edge/rate-limit.js';
import { requestLog } from './edge/request-log.js';
import { ApiError } from './errors.js';
import { buildOpenApi } from './openapi.js';
import { ChangeCounters } from './reads/change-counters.js';
import { ValidatorMemo } from './reads/validator-memo.js';
import type { RouteDef } from './route.js';
import { compileRoute, type PipelineDeps } from './route-pipeline.js';
import { RouteTable } from './route-table.js';
import { allRoutes } from './routes.js';
import { Idempotency } from './writes/idempotency.js';

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

/**
 * /api/v1: every request needs a key (an unknown route too) and counts against `general`,
 * then its route by table lookup (api/route-table.ts), or 404. The key and the general limit are
 * gates (edge/call.ts `Gate`): a call they pass at once goes on without a continuation made for
 * it. Internal.
 */
function apiSteps(routes: readonly RouteDef[], deps: PipelineDeps, authenticate: Gate) {
  const table = new RouteTable(
    routes.map((route) => ({ method: route.method, path: route.path, value: compileRoute(route, deps) })),
  );
  const { limiters } = deps;
  const general = limiters.enabled.general ? limiters.generalGate : undefined;
  const route = (call: Call, next: Next, path: string) => {
    const found = table.match(call.method, path);
    // OPTIONS too: this API has no CORS, so no list of methods is sent
    if (!found) return next(new ApiError('not_found'));
    const q = call.url.indexOf('?');
    found.value(call, next, found.params, q === -1 ? call.url : call.url.slice(0, q));
  };
  const limited = (call: Call, path: string, next: Next) => {
    if (general === undefined) return route(call, next, path);
    const passed = general(call, next);
    if (passed === true) return route(call, next, path);
    afterGate(passed, () => route(call, next, path), next);
  };
  return (call: Call, path: string, next: Next) => {
    const passed = authenticate(call, next);
    if (passed === true) return limited(call, path, next);
    afterGate(passed, () => limited(call, path, next), next);
  };
}

/**
 * `/healthz` (load balancers and monitors: 503 while the store cannot write; reads still work)
 * and `/openapi.json`. Internal. */
function servicePaths(store: Store, openapiText: string) {
  const health = (call: Call) => {
    const h = store.health?.() ?? { writable: true };
    if (h.writable) return call.sendJson(200, '{"status":"ok"}');
    call.setField('Retry-After', retryAfterSeconds(h.retryAfterMs));
    const since = new Date(h.since).toISOString();
    const retry_after_s = Number(retryAfterSeconds(h.retryAfterMs));
    const store_ = { writable: false, reason: h.reason, since, retry_after_s };
    call.sendJson(503, JSON.stringify({ status: 'degraded', store: store_ }));
  };
  return [
    { path: '/healthz', serve: health },
    { path: '/openapi.json', serve: (call: Call) => call.sendJson(200, openapiText) },
  ];
}

/** The limiters, a shared store's failures logged (the request is let through). Internal. */
function limitersOf(env: DomainEnv, log: Logger, shared: AppOptions['shared']): Limiters {
  return createLimiters(env.config, env.clock, shared?.rateStore, (err, bucket) =>
    log.error({ err, bucket }, 'rate limit store failed: the request was let through'),
  );
}

/**
 * Builds the HTTP edge of the API: logging with request ids, auth, rate limits, JSON parsing
 * (100 kB), schema validation, idempotent writes, the error catalogue, `/healthz` and
 * `/openapi.json`, and the paths other services mount beside it (`mount`). `listener` is
 * node's request listener; `app` the same behind an express app (for tests that `listen` it).
 *
 * @example
 * const { listener } = createApp({ store, commits, env: { clock: systemClock, config }, log });
 * createHttpServer(listener, config.server).listen(0);
 */
export function createApp({
  store,
  commits,
  env,
  log,
  keyUsage = new KeyUsage(),
  routes = allRoutes,
  shared,
}: AppOptions) {
  const idempotency = new Idempotency(store, env.clock);
  const openapi = buildOpenApi(routes, env.config);
  const limiters = limitersOf(env, log, shared);
  // conditional reads: a matching tag is answered from the memo while no commit concerns the
  // user, without building the body (a flood of 304s must not cost a list build each)
  const counters = ChangeCounters.of(commits);
  const deps: PipelineDeps = { store, env, limiters, idempotency, counters, memo: new ValidatorMemo() };
  const refresh = shared ? () => store.durable() : undefined;
  const authenticate = authGate(store.read, keyUsage, env.clock, limiters.anonymous, refresh);
  const mounts: Mount[] = [];
  const listener = front({
    trust: compileTrust(env.config.server.trust_proxy),
    // a metrics hook counting finished requests sits with the log line (requestLog's `close`)
    logRequest: requestLog(log, env.config.metrics.enabled === false ? undefined : recordRequest),
    // `Date` is the server's clock (virtual or real): clients such as remote bots read the time
    // of the server they talk to from it. On the system clock node's own header says the same.
    date: env.clock === systemClock ? undefined : dateHeader(() => env.clock.now()),
    api: apiSteps(routes, deps, authenticate),
    anonymous: limiters.anonymous,
    giveBack: (call) => limiters.giveBack('anonymous', call),
    services: servicePaths(store, JSON.stringify(openapi)),
    mounts,
    fail: (call, err) => answerError(call, err, log),
  });
  const app = express();
  app.disable('x-powered-by');
  app.use((req, res) => listener(req, res));

  /** Serves `prefix` (e.g. `/plugins/`) with `handler`, behind the front. */
  const mount = (prefix: string, handler: Mount['handler'], authenticated?: Mount['authenticated']) =>
    void mounts.push({ prefix, handler, authenticated });
  return {
    app,
    listener,
    idempotency,
    keyUsage,
    openapi,
    mount,
  };
}
