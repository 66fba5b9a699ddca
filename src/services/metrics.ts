/**
 * `GET /metrics`: the Prometheus exposition (telemetry/metrics.ts), served beside the API. Who
 * may read it (`metrics:` in config.yaml, docs/operations.md "Monitoring"): with `token` set,
 * whoever sends `Authorization: Bearer <token>`, on any address; without one, anyone on a
 * loopback address (like the console, and only to a loopback Host name: no DNS rebinding); on
 * another address without a token it is not served. `metrics.enabled: false` turns it off.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../config/schema.js';
import { metricsText } from '../telemetry/metrics.js';
import { hostOf, isLoopback } from '../util/loopback.js';
import type { ServerService } from './types.js';

/** How /metrics is served on a server: open (loopback), behind a token, or not, and why. */
export type MetricsAccess = { serve: 'open' } | { serve: 'token'; token: string } | { serve: false; why: string };

/**
 * Who may read /metrics on a server listening on `host`. Throws when `metrics.enabled: true`
 * asks for it on an address where it would be open to anyone (no `token`).
 *
 * @example metricsAccess({ enabled: undefined, token: undefined }, '127.0.0.1') // { serve: 'open' }
 */
export function metricsAccess(m: Config['metrics'], host: string): MetricsAccess {
  if (m.enabled === false) return { serve: false, why: 'metrics.enabled is false' };
  if (m.token !== undefined) return { serve: 'token', token: m.token };
  if (isLoopback(host)) return { serve: 'open' };
  const why = `the server listens on ${host}, not on a loopback address, and metrics.token is not set`;
  if (m.enabled === true)
    throw new Error(
      `config.yaml: metrics.enabled is true but ${why}: /metrics would be open to ` +
        `anyone. Set metrics.token: \${env:PINBOT_METRICS_TOKEN} (16+ characters) and ` +
        `send it as Authorization: Bearer …`,
    );
  return { serve: false, why };
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Whether a request carries the bearer token (compared in constant time). Internal. */
function bearerMatches(req: IncomingMessage, wanted: Buffer): boolean {
  const h = req.headers.authorization;
  if (typeof h !== 'string' || h.length > 600 || !/^bearer /i.test(h)) return false;
  return timingSafeEqual(digest(h.slice(7).trim()), wanted);
}

/** A JSON error in the API's shape. Internal. */
function refuse(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify({ error: { code, message } });
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

/** The handler of /metrics under `access` (served: open or token). */
export function metricsHandler(
  access: Exclude<MetricsAccess, { serve: false }>,
): (req: IncomingMessage, res: ServerResponse) => void {
  const wanted = access.serve === 'token' ? digest(access.token) : undefined;
  return (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics') return refuse(res, 404, 'not_found', 'no such path; the metrics are at /metrics');
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return refuse(res, 405, 'method_not_allowed', 'use GET /metrics', { Allow: 'GET, HEAD' });
    if (wanted) {
      if (!bearerMatches(req, wanted))
        return refuse(
          res,
          401,
          'unauthorized',
          'send the metrics token of config.yaml (metrics.token) as Authorization: Bearer <token>',
          { 'WWW-Authenticate': 'Bearer realm="pinbot metrics"' },
        );
    } else if (!isLoopback(hostOf(req.headers.host))) {
      // a page of another site whose name points at 127.0.0.1 (DNS rebinding) names its own host
      return refuse(
        res,
        421,
        'misdirected_request',
        '/metrics answers only to a loopback host name (127.0.0.1, localhost, [::1]) unless metrics.token is set',
      );
    }
    metricsText().then(
      ({ text, contentType }) => {
        res.writeHead(200, {
          'Content-Type': contentType,
          'Content-Length': Buffer.byteLength(text),
          'Cache-Control': 'no-store',
        });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: unknown) =>
        refuse(res, 500, 'internal_error', `the metrics could not be collected: ${(err as Error).message}`),
    );
  };
}

/**
 * The service that serves /metrics (docs/operations.md "Monitoring"). Recording goes on whether
 * or not it is served (the console's charts read the same counters), unless `metrics.enabled`
 * is false.
 *
 * @example startServer({ …, services: [...defaultServices(), metricsService()] })
 */
export function metricsService(): ServerService {
  return {
    name: 'metrics',
    start(ctx) {
      const access = metricsAccess(ctx.env.config.metrics, new URL(ctx.url).hostname);
      if (access.serve === false) {
        ctx.log.info(`metrics: /metrics not served (${access.why}; docs/operations.md "Monitoring")`);
        return;
      }
      if (!ctx.mount) return;
      const wanted = access.serve === 'token' ? digest(access.token) : undefined;
      // a scraper with the token is not counted against the anonymous rate limit
      ctx.mount('/metrics', metricsHandler(access), wanted && ((req) => bearerMatches(req, wanted)));
    },
  };
}
