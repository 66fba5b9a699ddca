import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BodyTooLarge, type EdgeCall, errorBody, readBody, sendBody } from '../util/http.js';
import { StepTimeoutError } from '../util/step-timeout.js';
import { asJson, callPlugin, describeThrown, PluginError } from './boundary.js';
import type { PluginInstance } from './instance.js';
import type { RouteHandler, RouteRequest, RouteResponse } from './types.js';

/** Largest request body a plugin route takes by default (`plugins.max_body_bytes`). */
export const MAX_BODY_BYTES = 1_048_576;
const METHODS = ['GET', 'POST', 'PUT', 'DELETE'];

interface Route {
  inst: PluginInstance;
  method: string;
  parts: string[];
  handler: RouteHandler;
}

/** An answer given before or instead of the plugin's (a body that is not JSON…). Internal. */
class Answer extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Splits `/a/:b/` into ['a', ':b']. Internal. */
const split = (path: string) => path.split('/').filter(Boolean);

const send = sendBody;

const error = (res: ServerResponse, status: number, code: string, message: string, headers?: Record<string, string>) =>
  send(res, status, errorBody(code, message), headers);

/** A body over the plugin's limit, as the plugin route's 413. Internal. */
const tooLarge = (limit: number) =>
  new Answer(
    413,
    'payload_too_large',
    `a plugin route takes a body of at most ${limit} bytes (plugins.max_body_bytes)`,
  );

/** The body (util/http.ts `readBody`), over the limit a 413 answer. Internal. */
const bodyOf = (req: IncomingMessage, limit: number): Promise<Buffer> =>
  readBody(req, limit).catch((err: unknown) => {
    throw err instanceof BodyTooLarge ? tooLarge(limit) : err;
  });

/** The plugin's answer, checked (a wrong shape is the plugin's failure). Internal. */
function checkAnswer(out: unknown, what: string): RouteResponse {
  const o = (out ?? {}) as RouteResponse;
  if (typeof o !== 'object' || Array.isArray(o))
    throw new Error(`${what} must answer { status, body, headers }, not ${describeThrown(out)}`);
  const status = o.status ?? 200;
  if (!Number.isInteger(status) || status < 100 || status > 599)
    throw new Error(`${what} answered status ${describeThrown(o.status)}; a status is a whole number 100-599`);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(o.headers ?? {}))
    if (typeof v === 'string' && /^[\w-]+$/.test(k) && !/[\r\n]/.test(v)) headers[k] = v;
  const body = Buffer.isBuffer(o.body) || typeof o.body === 'string' ? o.body : asJson(o.body, what);
  return { status, headers, body };
}

/** The id of the request (the edge's call; one is made when served alone). Internal. */
function requestIdOf(res: ServerResponse, call: EdgeCall | undefined): string {
  if (call) return call.id;
  const id = randomUUID();
  if (!res.headersSent) res.setHeader('X-Request-Id', id);
  return id;
}

/**
 * A new object without a prototype: a key sent from outside (`constructor`, `__proto__`) finds
 * nothing inherited. Internal. */
const bare = <T>(entries: Iterable<readonly [string, T]> = []): Record<string, T> =>
  Object.assign(Object.create(null) as Record<string, T>, Object.fromEntries(entries));

/**
 * The HTTP routes plugins mount under `/plugins/<name>/…` on the pinbot server. They are served
 * behind the API's edge (request id, request log, the anonymous rate limit: see api/app.ts). A
 * request is held work on the clock; a body over `plugins.max_body_bytes` is answered 413 before
 * it is read; the handler runs through the boundary with the plugin timeout, as input from
 * outside (its failures never quarantine the plugin). A throw is a 500 and a timeout a 504, a
 * disabled or quarantined plugin a 503: callers get a generic `plugin_failed` /
 * `plugin_timeout` / `plugin_unavailable` with the request id, the detail goes to the log.
 */
export class PluginRoutes {
  private readonly routes: Route[] = [];

  constructor(private readonly host: { instance(name: string): PluginInstance | undefined }) {}

  add(inst: PluginInstance, method: string, path: string, handler: RouteHandler): void {
    const m = String(method).toUpperCase();
    if (!METHODS.includes(m))
      throw new Error(`plugin ${inst.name}: route method ${JSON.stringify(method)}; use one of ${METHODS.join(', ')}`);
    if (typeof path !== 'string' || !path.startsWith('/'))
      throw new Error(`plugin ${inst.name}: a route path starts with /, e.g. "/:bot"`);
    if (typeof handler !== 'function')
      throw new Error(`plugin ${inst.name}: route ${m} ${path} needs a handler function`);
    const route = { inst, method: m, parts: split(path), handler };
    this.routes.push(route);
    inst.whenStopped(() => this.routes.splice(this.routes.indexOf(route) >>> 0, 1));
  }

  /** Where failures are logged that belong to no plugin (set by the host when it starts). */
  log?: { error(obj: object, msg: string): void };

  /** Serves a request under `/plugins/`; `call`: the edge's (api/edge/call.ts), whose id it answers with. */
  handle(req: IncomingMessage, res: ServerResponse, call?: EdgeCall): void {
    void this.serve(req, res, call).catch((err) => {
      const id = requestIdOf(res, call);
      this.log?.error({ reqId: id, err: describeThrown(err) }, 'plugin route: internal error');
      const message = 'The server could not answer. Its log has the detail under this request id.';
      send(res, 500, errorBody('internal_error', message, { request_id: id }));
    });
  }

  private match(
    inst: PluginInstance,
    parts: string[],
    method: string,
  ): { route?: Route; params: Record<string, string>; methods: string[] } {
    const methods: string[] = [];
    for (const r of this.routes) {
      if (r.inst !== inst || r.parts.length !== parts.length) continue;
      const params = bare<string>();
      if (!r.parts.every((p, i) => (p.startsWith(':') ? ((params[p.slice(1)] = parts[i]!), true) : p === parts[i])))
        continue;
      methods.push(r.method);
      if (r.method === method) return { route: r, params, methods };
    }
    return { params: bare(), methods };
  }

  private async serve(req: IncomingMessage, res: ServerResponse, call: EdgeCall | undefined): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://plugins.local');
    let parts: string[];
    try {
      parts = split(url.pathname).map(decodeURIComponent);
    } catch {
      return error(res, 400, 'bad_request', 'the path is not valid URL encoding');
    }
    const [, name = '', ...rest] = parts;
    const inst = this.host.instance(name);
    if (!inst) return error(res, 404, 'not_found', `no plugin named ${name} is loaded`);
    // why it is unavailable (its last error, file:line) is for the operator, not the caller
    const generic = (status: number, code: string, what: string, detail: string, frame?: string) => {
      const id = requestIdOf(res, call);
      inst.log.error({ reqId: id, status, frame }, `${req.method} ${url.pathname}: ${detail}`);
      return send(
        res,
        status,
        errorBody(code, `${what} The server log has the detail under this request id.`, { request_id: id }),
        { 'X-Request-Id': id },
      );
    };
    const why = inst.unavailable();
    if (why)
      return generic(503, 'plugin_unavailable', `Plugin ${name} is not available now.`, `plugin ${name}: ${why}`);
    const { route, params, methods } = this.match(inst, rest, (req.method ?? 'GET').toUpperCase());
    if (!route)
      return methods.length
        ? send(res, 405, errorBody('method_not_allowed', `use ${methods.join(', ')}`), { Allow: methods.join(', ') })
        : error(res, 404, 'not_found', `plugin ${name} has no route ${url.pathname}`);
    const limit = inst.supervision.maxBodyBytes ?? MAX_BODY_BYTES;
    const release = inst.deps?.clock.hold(`plugin ${name}: ${route.method} ${url.pathname}`);
    try {
      const body = await bodyOf(req, limit);
      const headers = bare<string | undefined>();
      for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
      const request: RouteRequest = {
        method: route.method,
        path: `/${rest.join('/')}`,
        params,
        query: bare(url.searchParams),
        headers,
        body,
        json() {
          try {
            return JSON.parse(body.toString('utf8'));
          } catch {
            throw new Answer(400, 'bad_request', 'the body is not JSON');
          }
        },
      };
      const what = `route ${route.method} ${route.parts.length ? `/${route.parts.join('/')}` : '/'}`;
      const out = await callPlugin(
        inst,
        what,
        async () => {
          try {
            return checkAnswer(await route.handler(request), what);
          } catch (err) {
            if (err instanceof Answer) return { status: err.status, body: errorBody(err.code, err.message) };
            throw err;
          }
        },
        { timeoutMs: inst.supervision.timeoutMs, outside: true },
      );
      send(res, out.status ?? 200, out.body, out.headers);
    } catch (err) {
      if (err instanceof Answer)
        return error(res, err.status, err.code, err.message, err.status === 413 ? { Connection: 'close' } : undefined);
      if (err instanceof StepTimeoutError)
        return generic(504, 'plugin_timeout', `Plugin ${name} did not answer in time.`, err.message);
      if (err instanceof PluginError) {
        if (err.traceReason === 'plugin_unavailable')
          return generic(503, 'plugin_unavailable', `Plugin ${name} is not available now.`, err.message);
        return generic(500, 'plugin_failed', `Plugin ${name} could not handle the request.`, err.message, err.frame);
      }
      throw err;
    } finally {
      release?.();
    }
  }
}
