import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { containsKey, logValue, redactUrl } from '../../util/secrets.js';
import { isInProcess } from '../in-process.js';
import type { RouteCells } from '../../telemetry/http-metrics.js';
import type { Call } from './call.js';
import { EdgeResponse } from './response.js';

const REQUEST_ID = /^[\w.-]{1,64}$/;

/** Headers whose values are logged (cut to VALUE_MAX); of the others only the names are. */
const LOGGED = new Set([
  'host',
  'user-agent',
  'content-type',
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'accept',
  'accept-encoding',
  'accept-language',
  'connection',
  'origin',
  'referer',
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-real-ip',
  'x-request-id',
  'idempotency-key',
]);
/** The two headers that carry the key: logged as `[redacted]` when present. */
const AUTH = new Set(['x-api-key', 'authorization']);
const VALUE_MAX = 200;
const URL_MAX = 512;
const OTHER_NAMES_MAX = 20;
/** A summary line is written at least every this many lines not written. */
const QUIET_REPORT_EVERY = 10_000;

/** The level of a finished request's log line: 5xx error, 4xx info, the rest debug. Internal. */
function levelOf(status: number): 'error' | 'info' | 'debug' {
  return status >= 500 ? 'error' : status >= 400 ? 'info' : 'debug';
}

/**
 * The headers of a log line: the allow-listed ones with their values cut short, the key
 * headers as `[redacted]`, and only the names of the rest (`other`), never their values — a
 * key sent under a misnamed header (`Api-Key`, `X-Auth-Token`, `Cookie`, …) is not written.
 * Anything key-shaped, in any encoding, becomes `[redacted]` (util/secrets.ts). Internal.
 */
export function loggedHeaders(headers: IncomingHttpHeaders): { headers: Record<string, string>; other?: string[] } {
  const out: Record<string, string> = {};
  const other: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    if (AUTH.has(name)) out[name] = '[redacted]';
    else if (LOGGED.has(name)) out[name] = logValue(Array.isArray(value) ? value.join(', ') : value, VALUE_MAX);
    else if (other.length < OTHER_NAMES_MAX) other.push(logValue(name, 40));
  }
  return other.length ? { headers: out, other } : { headers: out };
}

/** Told of every finished request, its status and its time in ms (the metrics: telemetry/http-metrics.ts). */
export type RequestRecorder = (req: IncomingMessage, status: number, ms: number, route?: RouteCells) => void;

/**
 * Gives every request an id (a well-formed incoming `X-Request-Id` that is not key-shaped,
 * else a UUID), echoes it in `X-Request-Id`, and writes one line per finished request:
 * `{ req: { id, method, url, headers, other_headers?, transport? }, res: { statusCode },
 * responseTime, user_id }` (`transport: 'in-process'` for an embedded bot's) at `error` for
 * 5xx, `info` for 4xx, `debug` otherwise (successes show with `log.level: debug`). Only
 * allow-listed header values are written, cut short; keys are redacted from them and from the
 * URL. Lines of quiet calls (`call.quiet`) are counted and summed up in one `request lines not
 * written` line before the next written one. `record`, when given, hears of every finished
 * request, whatever the log level. Returns the function the edge calls once per request
 * (api/edge/front.ts).
 *
 * Why not pino-http: it builds a child logger per request, serialising and redacting the whole
 * request, even when the line is below the log level. Under load that was a quarter of the CPU
 * of `GET /me` (bench/read, `node --cpu-prof`). Here nothing is built unless a line is written,
 * and a request costs one `close` listener (on pinbot's server the same function for all).
 *
 * @example
 * const logRequest = requestLog(log);
 * logRequest(call); // when the call is made
 */
export function requestLog(log: Logger, record?: RequestRecorder): (call: Call) => void {
  let quiet = 0;
  const reportQuiet = () => {
    log.warn(
      { not_written: quiet },
      'request lines not written: refused by the anonymous rate limit (rate_limits.anonymous)',
    );
    quiet = 0;
  };
  // 'close' comes once per response, after 'finish' or when the client went away first.
  const onClose = (call: Call): void => {
    const res = call.res;
    if (record) record(call.req, res.statusCode, performance.now() - call.started, call.route);
    const level = levelOf(res.statusCode);
    if (!log.isLevelEnabled(level)) return;
    if (call.quiet) {
      if (++quiet >= QUIET_REPORT_EVERY) reportQuiet();
      return;
    }
    if (quiet) reportQuiet();
    const responseTime = Math.round(performance.now() - call.started);
    const { headers, other } = loggedHeaders(call.req.headers);
    const url = redactUrl(call.originalUrl);
    const line = {
      req: {
        id: call.id,
        method: call.method,
        url: url.length > URL_MAX ? `${url.slice(0, URL_MAX)}…[+${url.length - URL_MAX}]` : url,
        headers,
        ...(other ? { other_headers: other } : {}),
        // an embedded bot's request, handed over in process (api/in-process.ts): no socket
        ...(isInProcess(call.req) ? { transport: 'in-process' } : {}),
      },
      res: { statusCode: res.statusCode },
      responseTime,
      ...(call.user ? { user_id: call.user.id } : {}),
    };
    log[level](line, res.writableFinished ? 'request completed' : 'request aborted');
  };
  // one listener for every response of pinbot's server, which holds its call (no closure per request)
  function closedEdge(this: EdgeResponse): void {
    onClose(this.edgeCall as Call);
  }
  return (call) => {
    const incoming = call.req.headers['x-request-id'];
    const id =
      typeof incoming === 'string' && REQUEST_ID.test(incoming) && !containsKey(incoming) ? incoming : randomUUID();
    call.id = id;
    call.setField('X-Request-Id', id);
    call.started = performance.now();
    const res = call.res;
    if (res instanceof EdgeResponse) {
      res.edgeCall = call;
      res.on('close', closedEdge);
    } else res.on('close', () => onClose(call));
  };
}
