import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * What every HTTP answer of pinbot's own code is written with — the API (api/edge/), the
 * plugins' routes (plugin-api/routes.ts) and the console (console/app.ts) — so sending, error
 * bodies and body reading exist once. Here (util/) because all three import it and none of
 * them may import another.
 */

/** The `Content-Type` of every JSON answer of the API. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Sends a JSON body that is already a string (so replays are byte for byte), straight to
 * node's response: express's `send` re-parses the content type twice and checks freshness for
 * an ETag never set, measurable on every read (bench/read).
 */
export function sendJson(res: ServerResponse, status: number, body: string, type = JSON_TYPE): void {
  res.statusCode = status;
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/**
 * Sends `body` as it is: bytes as `application/octet-stream`, a string as `text/plain`,
 * anything else as JSON (`type` overrides the type); `headers` beside. An answer already
 * started is only ended.
 */
export function sendBody(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
  type?: string,
): void {
  if (res.headersSent) return void res.end();
  const raw = Buffer.isBuffer(body)
    ? body
    : typeof body === 'string'
      ? Buffer.from(body)
      : body === undefined
        ? Buffer.alloc(0)
        : Buffer.from(JSON.stringify(body));
  const given =
    type ??
    (Buffer.isBuffer(body)
      ? 'application/octet-stream'
      : typeof body === 'string'
        ? 'text/plain; charset=utf-8'
        : 'application/json');
  res.writeHead(status, { 'Content-Type': given, 'Content-Length': String(raw.length), ...headers });
  res.end(raw);
}

/**
 * The error body of every JSON answer (API.md "Errors"): `{ error: { code, message, … } }`,
 * `extra` (details, request_id, retry_after) after the two.
 */
export function errorBody(
  code: string,
  message: string,
  extra?: Record<string, unknown>,
): { error: Record<string, unknown> } {
  return { error: { code, message, ...extra } };
}

/** A Retry-After value: whole seconds, at least 1. */
export function retryAfterSeconds(ms: number): string {
  return String(Math.max(1, Math.ceil(ms / 1000)));
}

/** A body over the limit of `readBody`. */
export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the body is over ${limit} bytes`);
  }
}

/**
 * Where a request that holds its whole body already keeps it (api/in-process.ts: a bot's
 * request handed to the pipeline without a socket): `readBody` takes it from there instead of
 * reading it through the stream, and leaves the stream without it.
 */
export const HELD_BODY: unique symbol = Symbol('pinbot.heldBody');

/** A request that may hold its body (see HELD_BODY). */
type MayHoldBody = IncomingMessage & { [HELD_BODY]?: Buffer };

/**
 * The request body, at most `limit` bytes. A declared Content-Length over it is refused before
 * a byte is read; a body that grows past it (chunked) stops being kept at once. Either way the
 * rest is read and dropped, so the client gets its 413 instead of a reset. A body the request
 * holds already (HELD_BODY) is taken as it is, under the same limit.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const held = (req as MayHoldBody)[HELD_BODY];
  if (held !== undefined) {
    (req as MayHoldBody)[HELD_BODY] = undefined;
    return held.length > limit ? Promise.reject(new BodyTooLarge(limit)) : Promise.resolve(held);
  }
  const declared = Number(req.headers['content-length']);
  if (declared > limit) {
    req.resume();
    return Promise.reject(new BodyTooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      if (size > limit) return;
      size += c.length;
      if (size > limit) {
        chunks = [];
        reject(new BodyTooLarge(limit));
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * A request as it passes the edge (api/edge/call.ts makes one per request): its id (sent as
 * `X-Request-Id`, logged with its line) and the client's address. Handlers of paths mounted
 * beside the API (plugins' routes, the console) are given it.
 */
export interface EdgeCall {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly id: string;
}
