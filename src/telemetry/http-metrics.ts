/**
 * The HTTP families' hook: the API's router marks a request with its route (`markRoute`, the
 * pattern, never the raw path), and the request log calls `recordRequest` once per finished
 * request. Recording is a property read, two small map lookups (cached per route), an add and
 * a bucket search: test/telemetry/http-metrics-cost.test.ts prints its cost per request.
 */
import type { CounterCell, HistogramCell } from './families.js';
import { metrics } from './metrics.js';

/** Where the router leaves a request's route cells. Internal. */
const ROUTE = Symbol('pinbot.route');

/** The cells of one route pattern, per method and status. */
export interface RouteCells {
  pattern: string;
  byMethod: Map<string, { duration: HistogramCell; byStatus: Map<number, CounterCell> }>;
  /** The cells of the route's last request (most are like the one before): no lookup for them. */
  last: { method: string; status: number; duration: HistogramCell; count: CounterCell } | undefined;
}

const routes = new Map<string, RouteCells>();
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The cells of a route pattern (`/api/v1/conversations/:id`), made once. */
export function routeCells(pattern: string): RouteCells {
  let r = routes.get(pattern);
  if (!r) routes.set(pattern, (r = { pattern, byMethod: new Map(), last: undefined }));
  return r;
}

/** A request the router matched: `cells` from `routeCells(pattern)`. */
export function markRoute(req: object, cells: RouteCells): void {
  (req as { [ROUTE]?: RouteCells })[ROUTE] = cells;
}

/**
 * The route label of a request no API route matched: the service paths by name, `/api/v1/*`
 * under the API, anything else `unmatched` (so a scan of random paths adds one label, not one
 * per path). Internal.
 */
function otherRoute(url: string): RouteCells {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (path === '/healthz' || path === '/openapi.json' || path === '/metrics') return routeCells(path);
  if (path === '/console' || path.startsWith('/console/')) return routeCells('/console');
  if (path.startsWith('/plugins/')) return routeCells('/plugins/');
  // refused before its route was looked up (no key, the general limit) or no such route
  if (path.startsWith('/api/v1') || /^\/api\/v1/i.test(path)) return routeCells('/api/v1/*');
  return routeCells('unmatched');
}

/** The route label of a request (its pattern, or what `otherRoute` makes of its path). */
export function routeOf(req: { originalUrl?: string; url?: string }): string {
  return ((req as { [ROUTE]?: RouteCells })[ROUTE] ?? otherRoute(req.originalUrl ?? req.url ?? '')).pattern;
}

/**
 * Counts a finished request: `pinbot_http_requests_total{route,method,status}` and
 * `pinbot_http_request_duration_seconds{route,method}`. `ms`: from its start to now; `route`:
 * its route's cells when the caller holds them (the API's call), else those `markRoute` left on
 * the request, else what `otherRoute` makes of its path.
 */
export function recordRequest(
  req: { method?: string; originalUrl?: string; url?: string },
  status: number,
  ms: number,
  route?: RouteCells,
): void {
  const r = route ?? (req as { [ROUTE]?: RouteCells })[ROUTE] ?? otherRoute(req.originalUrl ?? req.url ?? '');
  const last = r.last;
  if (last !== undefined && last.status === status && last.method === req.method) {
    last.count.value++;
    metrics.httpDuration.observeIn(last.duration, ms / 1000);
    return;
  }
  const method = req.method !== undefined && METHODS.has(req.method) ? req.method : 'other';
  let m = r.byMethod.get(method);
  if (!m) r.byMethod.set(method, (m = { duration: metrics.httpDuration.cell(r.pattern, method), byStatus: new Map() }));
  let c = m.byStatus.get(status);
  if (!c) m.byStatus.set(status, (c = metrics.httpRequests.cell(r.pattern, method, String(status))));
  c.value++;
  metrics.httpDuration.observeIn(m.duration, ms / 1000);
  r.last = { method, status, duration: m.duration, count: c };
}
