import { randomUUID } from 'node:crypto';
import { createServer, type RequestListener, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, type ErrorCode } from './api/errors.js';
import { EdgeResponse } from './api/edge/response.js';
import { type InProcessTransport, inProcessTransport } from './api/in-process.js';
import type { Config } from './config/schema.js';
import { traceRequests } from './telemetry/http-tracing.js';
import { tracingOn } from './telemetry/tracing.js';
import { parseDuration } from './util/duration.js';

/** The catalogue code of an error node's HTTP parser (or its timeouts) reports. Internal. */
function codeOf(err: NodeJS.ErrnoException): ErrorCode {
  if (err.code === 'HPE_HEADER_OVERFLOW') return 'headers_too_large';
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'request_timeout';
  return 'malformed_request';
}

/**
 * Answers what node's HTTP parser refuses before express sees the request (a malformed request
 * line, headers over 16 kB, a request that arrives too slowly) with the API's JSON error body
 * instead of node's empty one, then closes the connection. A connection that is already
 * answering a request, or that the client reset, is just closed. Internal.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  const busy = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  if (err.code === 'ECONNRESET' || !socket.writable || busy) {
    socket.destroy();
    return;
  }
  const error = new ApiError(codeOf(err));
  const body = JSON.stringify(error.toBody());
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${randomUUID()}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

/**
 * The HTTP server of `pinbot serve`, with the limits of `config.server`: how long a request's
 * headers (`headers_timeout`) and the whole request (`request_timeout`) may take to arrive, how
 * long an idle keep-alive connection stays open (`keep_alive_timeout`), and how many
 * connections may be open at once (`max_connections`; more are closed on arrival). A request
 * whose client half-closes the connection after sending it is still answered.
 *
 * @example
 * const http = createHttpServer(app, configFrom({}).server);
 * http.listen(3000);
 */
export function createHttpServer(app: RequestListener, server: Config['server']): Server {
  const headersTimeout = parseDuration(server.headers_timeout)!;
  const requestTimeout = parseDuration(server.request_timeout)!;
  const http = createServer(
    {
      headersTimeout,
      requestTimeout,
      // node checks the two timeouts on this interval (default 30 s, which would let a slow
      // client hold a connection up to 30 s past its timeout).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeout / 4))),
      // node's response, the edge's fields written with the head in one go (api/edge/response.ts)
      ServerResponse: EdgeResponse as unknown as typeof ServerResponse,
    },
    // a server span per request while tracing is on (OTEL_*; telemetry/tracing.ts); off, the app itself
    tracingOn() ? traceRequests(app) : app,
  );
  http.keepAliveTimeout = parseDuration(server.keep_alive_timeout)!;
  // A client may close its write side once its request is sent (a half-close). By default node
  // then aborts the request and ends the socket at once, so a write that commits afterwards is
  // never answered. Kept half-open, the answer is sent and the socket closed after it. (Node's
  // own switch for this, not in its typings; test/server/half-close.test.ts holds it to it.)
  (http as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  http.maxConnections = server.max_connections;
  http.on('clientError', answerClientError);
  return http;
}

/**
 * The server's API in process for its embedded bots (api/in-process.ts): `app` as the HTTP server
 * runs it — a server span per request while tracing is on — reached without a socket at `url`.
 *
 * @example ctx.inProcess = inProcessServer(listener, url);
 */
export function inProcessServer(app: RequestListener, url: string): InProcessTransport {
  return inProcessTransport(tracingOn() ? traceRequests(app) : app, url);
}
