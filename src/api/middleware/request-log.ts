import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { containsKey, logValue, redactUrl } from '../../util/secrets.js';

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

/** Marks a response whose log line is not worth writing one by one (a flood the rate limit refuses). */
export function quietLine(res: Response): void {
  res.locals.quietLog = true;
}

/** Told of every finished request, its status and its time in ms (the metrics: telemetry/http-metrics.ts). */
export type RequestRecorder = (req: Request, status: number, ms: number) => void;

/** Where a request's log line state is kept on the response. Internal. */
const STARTED = Symbol('request started');
type Logged = Response & { [STARTED]?: number };

/**
 * Gives every request an id (a well-formed incoming `X-Request-Id` that is not key-shaped,
 * else a UUID), echoes it in `X-Request-Id`, and writes one line per finished request:
 * `{ req: { id, method, url, headers, other_headers? }, res: { statusCode }, responseTime,
 * user_id }` at `error` for 5xx, `info` for 4xx, `debug` otherwise (successes show with
 * `log.level: debug`). Only allow-listed header values are written, cut short; keys are
 * redacted from them and from the URL. Lines marked quiet (`quietLine`) are counted and
 * summed up in one `request lines not written` line before the next written one. `record`, when
 * given, hears of every finished request, whatever the log level. `req.log` is
 * the logger, for the error handler. Returns the function to call once per request (the API's
 * front, api/app.ts).
 *
 * Why not pino-http: it builds a child logger per request, serialising and redacting the whole
 * request, even when the line is below the log level. Under load that was a quarter of the CPU
 * of `GET /me` (bench/read, `node --cpu-prof`). Here nothing is built unless a line is written,
 * and every request shares one `close` listener (no closure per request).
 *
 * @example
 * const logRequest = requestLog(log);
 * app.use((req, res, next) => { logRequest(req, res); next(); });
 */
export function requestLog(log: Logger, record?: RequestRecorder): (req: Request, res: Response) => void {
  let quiet = 0;
  const reportQuiet = () => {
    log.warn(
      { not_written: quiet },
      'request lines not written: refused by the anonymous rate limit (rate_limits.anonymous)',
    );
    quiet = 0;
  };
  // 'close' comes once per response, after 'finish' or when the client went away first.
  function onClose(this: Logged): void {
    const res = this;
    if (record) record(res.req, res.statusCode, performance.now() - (res[STARTED] ?? 0));
    const level = levelOf(res.statusCode);
    if (!log.isLevelEnabled(level)) return;
    if (res.locals.quietLog) {
      if (++quiet >= QUIET_REPORT_EVERY) reportQuiet();
      return;
    }
    if (quiet) reportQuiet();
    const req = res.req;
    const responseTime = Math.round(performance.now() - (res[STARTED] ?? 0));
    const { headers, other } = loggedHeaders(req.headers);
    const url = redactUrl(req.originalUrl);
    const line = {
      req: {
        id: req.id,
        method: req.method,
        url: url.length > URL_MAX ? `${url.slice(0, URL_MAX)}…[+${url.length - URL_MAX}]` : url,
        headers,
        ...(other ? { other_headers: other } : {}),
      },
      res: { statusCode: res.statusCode },
      responseTime,
      ...(req.user ? { user_id: req.user.id } : {}),
    };
    log[level](line, res.writableFinished ? 'request completed' : 'request aborted');
  }
  return (req, res) => {
    const incoming = req.headers['x-request-id'];
    const id =
      typeof incoming === 'string' && REQUEST_ID.test(incoming) && !containsKey(incoming) ? incoming : randomUUID();
    req.id = id;
    (req as Request & { log: Logger }).log = log;
    res.setHeader('X-Request-Id', id);
    (res as Logged)[STARTED] = performance.now();
    res.on('close', onClose);
  };
}
