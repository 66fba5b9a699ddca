import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { KEY_PREFIX } from '../../domain/users/keys.js';

const REQUEST_ID = /^[\w.-]{1,64}$/;

/** Anything shaped like an API key, also URL-encoded: a key pasted into a URL is not logged. */
const KEY_IN_TEXT = new RegExp(`${KEY_PREFIX}[A-Za-z0-9_%-]{20,}`, 'g');

/** The level of a finished request's log line: 5xx error, 4xx info, the rest debug. Internal. */
function levelOf(status: number): 'error' | 'info' | 'debug' {
  return status >= 500 ? 'error' : status >= 400 ? 'info' : 'debug';
}

/**
 * Gives every request an id (a well-formed incoming `X-Request-Id`, else a UUID), echoes it in
 * `X-Request-Id`, and writes one line per finished request: `{ req: { id, method, url, headers },
 * res: { statusCode }, responseTime, user_id }` at `error` for 5xx, `info` for 4xx, `debug`
 * otherwise (successes show with `log.level: debug`). Keys in headers are redacted by the
 * logger (src/log.ts REDACT). `req.log` is the logger, for the error handler.
 *
 * Why not pino-http: it builds a child logger per request, serialising and redacting the whole
 * request, even when the line is below the log level. Under load that was a quarter of the CPU
 * of `GET /me` (bench/read, `node --cpu-prof`). Here nothing is built unless a line is written.
 *
 * @example
 * app.use(requestLog(log));
 */
export function requestLog(log: Logger): RequestHandler {
  return (req, res, next) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    req.id = id;
    (req as typeof req & { log: Logger }).log = log;
    res.setHeader('X-Request-Id', id);
    const start = performance.now();
    // 'close' comes once per response, after 'finish' or when the client went away first.
    res.once('close', () => {
      const level = levelOf(res.statusCode);
      if (!log.isLevelEnabled(level)) return;
      const responseTime = Math.round(performance.now() - start);
      const line = {
        req: { id, method: req.method, url: req.originalUrl.replace(KEY_IN_TEXT, `${KEY_PREFIX}[redacted]`), headers: req.headers },
        res: { statusCode: res.statusCode },
        responseTime,
        ...(req.user ? { user_id: req.user.id } : {}),
      };
      log[level](line, res.writableFinished ? 'request completed' : 'request aborted');
    });
    next();
  };
}
