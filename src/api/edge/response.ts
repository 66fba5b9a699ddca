import { type OutgoingHttpHeader, ServerResponse } from 'node:http';

/** node's own writeHead (statusCode, [reason], [headers]). Internal. */
const WRITE_HEAD = ServerResponse.prototype.writeHead as (
  this: ServerResponse,
  statusCode: number,
  reason?: unknown,
  headers?: unknown,
) => ServerResponse;

/** Set on a server that is stopping (closeAfterAnswers). Internal. */
const STOPPING = Symbol('pinbot.stopping');

/**
 * Whether any server of the process has begun to stop: until one has, a head is written without
 * looking for its server (three loads and a symbol's per answer). Internal.
 */
let anyStopping = false;

/**
 * Every answer `server` writes a head for from now on says `Connection: close` — those in
 * flight, those pipelined behind them and any that arrives before the listener closes — so no
 * client reuses a connection of a server that is stopping (`serve`'s graceful stop).
 */
export function closeAfterAnswers(server: object): void {
  (server as { [STOPPING]?: boolean })[STOPPING] = true;
  anyStopping = true;
}

/** Whether the server of a response's connection is stopping (closeAfterAnswers). Internal. */
function stopping(res: ServerResponse): boolean {
  const server = (res.req?.socket as { server?: { [STOPPING]?: boolean } } | undefined)?.server;
  return server?.[STOPPING] === true;
}

/**
 * The response class of pinbot's HTTP server (`createHttpServer` gives it to node): node's own,
 * with the fields the edge answers every request with — `X-Request-Id`, `RateLimit` and
 * `RateLimit-Policy`, a virtual clock's `Date`, an error's `WWW-Authenticate` or `Retry-After`
 * — kept in a list (`edgeHead`, name and value in turn) instead of one `setHeader` each as the
 * request passes the edge. The API's own answers write them in one `writeHead(status, list)`
 * with the body's two fields (api/edge/call.ts `Call.sendJson`): node checks each field once and
 * builds no header map (issue 33: 5 `setHeader` calls were ~1.5 µs of a read on the bench VM).
 *
 * Anything else that touches the response's fields — `setHeader`, `getHeader`, `writeHead`, an
 * `end` without a head, `flushHeaders` — first sets the kept fields on it, as `setHeader` would
 * have when the edge made them: a mounted service, a 304 or a write's answer sees and sends
 * exactly the fields, in the order, that it did before.
 */
export class EdgeResponse extends ServerResponse {
  /** The edge's fields not yet on the response; undefined once set or written (or never used). */
  edgeHead: string[] | undefined = undefined;
  /** A field was set on the response itself (it then has a header map of its own). */
  fieldsSet = false;
  /** The edge's call of this response (its log line's `close` listener reads it: no closure per request). */
  edgeCall: unknown = undefined;

  /** Sets the kept fields on the response, in their order (a name that comes again is added). */
  flushEdgeHead(): void {
    const head = this.edgeHead;
    if (head === undefined) return;
    this.edgeHead = undefined;
    for (let i = 0; i < head.length; i += 2) {
      const name = head[i]!;
      // a name seen before in the list is one more line of it (a second rate-limit bucket)
      if (head.indexOf(name) < i) super.appendHeader(name, head[i + 1]!);
      else super.setHeader(name, head[i + 1]!);
    }
    this.fieldsSet = true;
  }

  // (statusCode, [reason], [headers]) named, not `...args`: no array and no `apply` per answer
  override writeHead(statusCode: number, reason?: unknown, headers?: unknown): this {
    if (this.edgeHead !== undefined && !this.headersSent) this.flushEdgeHead();
    if (anyStopping && stopping(this) && !this.headersSent) {
      // a list given to writeHead goes out as it is (a map would merge a name that comes twice)
      const list = Array.isArray(reason) ? reason : Array.isArray(headers) ? headers : undefined;
      if (list === undefined) super.setHeader('Connection', 'close');
      else if (Array.isArray(list[0])) list.push(['Connection', 'close']);
      else list.push('Connection', 'close');
    }
    return WRITE_HEAD.call(this, statusCode, reason, headers) as this;
  }

  override setHeader(name: string, value: number | string | readonly string[]): this {
    if (this.edgeHead !== undefined) this.flushEdgeHead();
    this.fieldsSet = true;
    return super.setHeader(name, value);
  }

  override appendHeader(name: string, value: string | readonly string[]): this {
    if (this.edgeHead !== undefined) this.flushEdgeHead();
    this.fieldsSet = true;
    return super.appendHeader(name, value);
  }

  override getHeader(name: string): OutgoingHttpHeader | undefined {
    if (this.edgeHead !== undefined) this.flushEdgeHead();
    return super.getHeader(name);
  }

  override getHeaders(): ReturnType<ServerResponse['getHeaders']> {
    if (this.edgeHead !== undefined) this.flushEdgeHead();
    return super.getHeaders();
  }

  override getHeaderNames(): string[] {
    if (this.edgeHead !== undefined) this.flushEdgeHead();
    return super.getHeaderNames();
  }

  /** node's `getRawHeaderNames` (not in its typings): the kept fields are set first, as above. */
  getRawHeaderNames(): string[] {
    if (this.edgeHead !== undefined) this.flushEdgeHead();
    const proto = ServerResponse.prototype as unknown as { getRawHeaderNames(this: ServerResponse): string[] };
    return proto.getRawHeaderNames.call(this);
  }

  override hasHeader(name: string): boolean {
    if (this.edgeHead !== undefined) this.flushEdgeHead();
    return super.hasHeader(name);
  }

  override removeHeader(name: string): void {
    if (this.edgeHead !== undefined) this.flushEdgeHead();
    super.removeHeader(name);
  }
}
