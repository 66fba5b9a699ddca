import { AsyncResource } from 'node:async_hooks';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, OutgoingHttpHeader, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { HELD_BODY } from '../util/http.js';
import { type RawRequest, type RawResponse, settleOnce } from '../util/request-settle.js';

/** The address an in-process request comes from (as a loopback connection would say). Internal. */
const LOOPBACK = '127.0.0.1';

/**
 * The socket of every in-process request: what `proxy-addr` and the request log read of one,
 * and the mark by which they are told apart (`isInProcess`). Internal.
 */
const IN_PROCESS_SOCKET = Object.freeze({
  remoteAddress: LOOPBACK,
  remotePort: 0,
  remoteFamily: 'IPv4',
  encrypted: false,
  inProcess: true,
});

/** Whether a request came through the in-process transport (its log line says so). */
export function isInProcess(req: IncomingMessage): boolean {
  return (req.socket as unknown) === IN_PROCESS_SOCKET;
}

/**
 * The request side: node's request fields the edge reads, and the body — held as bytes, which
 * util/http.ts `readBody` takes as they are (HELD_BODY: no stream, no chunks, no events), and
 * given as a readable stream to whatever reads the request as a socket's (body-parser for a
 * body the short way does not take), on its first read. Internal.
 */
class InProcessIncoming extends Readable {
  [HELD_BODY]: Buffer | undefined;
  readonly socket = IN_PROCESS_SOCKET;
  readonly connection = IN_PROCESS_SOCKET;
  readonly httpVersion = '1.1';
  readonly httpVersionMajor = 1;
  readonly httpVersionMinor = 1;
  complete = true;
  aborted = false;

  constructor(
    public url: string,
    readonly method: string,
    readonly headers: Record<string, string>,
    body: Buffer | undefined,
  ) {
    super();
    this[HELD_BODY] = body === undefined || body.length === 0 ? undefined : body;
  }

  /** The body, unless `readBody` took it, then the end: on the stream's first read. */
  override _read(): void {
    const body = this[HELD_BODY];
    this[HELD_BODY] = undefined;
    if (body !== undefined) this.push(body);
    this.push(null);
  }
}

/** `Date` as node's server sends it: the system clock's UTC string, made once a second. */
let dateSecond = Number.NaN;
let dateText = '';
function systemDate(): string {
  const now = Date.now();
  const s = Math.floor(now / 1000);
  if (s !== dateSecond) [dateSecond, dateText] = [s, new Date(now).toUTCString()];
  return dateText;
}

/** The headers `writeHead` may be given. Internal. */
type Headers_ = Record<string, OutgoingHttpHeader>;

/** A header value as node's client reads it (a list joined with ", "). Internal. */
function headerText(v: OutgoingHttpHeader): string {
  return Array.isArray(v) ? v.join(', ') : String(v);
}

/**
 * The response side: the part of node's `ServerResponse` the API's pipeline uses (status,
 * headers, `end`, `finish` and `close`), collected into the client's answer instead of being
 * written to a socket. Internal.
 */
class CollectedResponse extends EventEmitter {
  statusCode = 200;
  statusMessage = '';
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  destroyed = false;
  private readonly fields = new Map<string, [string, OutgoingHttpHeader]>();
  private chunks: string[] = [];

  constructor(
    readonly req: InProcessIncoming,
    private readonly done: (res: CollectedResponse) => void,
    /** The server cut the answer short (its error answer after the head was sent). */
    private readonly cut: () => void,
  ) {
    super();
  }

  get finished(): boolean {
    return this.writableEnded;
  }

  setHeader(name: string, value: OutgoingHttpHeader): this {
    if (this.headersSent) throw new Error(`Cannot set header ${name}: the answer started`);
    this.fields.set(name.toLowerCase(), [name, value]);
    return this;
  }

  appendHeader(name: string, value: OutgoingHttpHeader): this {
    const had = this.fields.get(name.toLowerCase());
    if (!had) return this.setHeader(name, value);
    const list = [had[1], value].flat().map(String);
    return this.setHeader(had[0], list);
  }

  getHeader(name: string): OutgoingHttpHeader | undefined {
    return this.fields.get(name.toLowerCase())?.[1];
  }

  getHeaders(): Record<string, OutgoingHttpHeader> {
    return Object.fromEntries([...this.fields].map(([k, [, v]]) => [k, v]));
  }

  getHeaderNames(): string[] {
    return [...this.fields.keys()];
  }

  hasHeader(name: string): boolean {
    return this.fields.has(name.toLowerCase());
  }

  removeHeader(name: string): void {
    this.fields.delete(name.toLowerCase());
  }

  writeHead(status: number, message?: string | Headers_, more?: Headers_): this {
    const headers = typeof message === 'object' ? message : more;
    if (typeof message === 'string') this.statusMessage = message;
    this.statusCode = status;
    for (const [k, v] of Object.entries(headers ?? {})) this.setHeader(k, v as OutgoingHttpHeader);
    this.headersSent = true;
    return this;
  }

  write(chunk: string | Uint8Array): boolean {
    if (this.writableEnded || this.destroyed) return false;
    this.headersSent = true;
    this.chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  }

  end(chunk?: string | Uint8Array | (() => void), cb?: () => void): this {
    if (typeof chunk === 'function') [cb, chunk] = [chunk, undefined];
    if (this.writableEnded) return this;
    if (chunk !== undefined) this.write(chunk);
    this.headersSent = true;
    this.writableEnded = true;
    if (!this.destroyed) {
      this.writableFinished = true;
      this.done(this);
    }
    // node emits them once the socket took the bytes: after this call, never inside it
    process.nextTick(() => {
      if (this.writableFinished) this.emit('finish');
      this.close();
      cb?.();
    });
    return this;
  }

  /**
   * The answer is cut short: the client went away (its timeout or abort), or the server gave
   * up on an answer already started — the client gets `socket hang up` as over HTTP. The log
   * line says `request aborted`.
   */
  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    if (!this.writableEnded) this.cut();
    process.nextTick(() => this.close());
    return this;
  }

  setTimeout(): this {
    return this;
  }

  flushHeaders(): void {
    this.headersSent = true;
  }

  private closed = false;
  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.emit('close');
  }

  /** The answer as the client reads it: node's `Date` added as its server adds it. */
  answer(): RawResponse {
    const status = this.statusCode;
    const fields = this.fields;
    // a 304 and a 204 carry no body, whatever was written (node drops it too)
    const text = status === 304 || status === 204 ? '' : this.chunks.join('');
    const date = fields.has('date') ? undefined : systemDate();
    return {
      status,
      text,
      headers: {
        get(name: string): string | null {
          const lower = name.toLowerCase();
          if (lower === 'date' && date !== undefined) return date;
          const f = fields.get(lower);
          return f === undefined ? null : headerText(f[1]);
        },
      },
    };
  }
}

/** Where an in-process request may go: the API under the server's own base URL. Internal. */
function apiPathOf(url: string, origin: string): string | undefined {
  if (!url.startsWith(origin)) return undefined;
  const path = url.slice(origin.length);
  const after = path.charAt(7);
  const whole = after === '' || after === '/' || after === '?';
  return path.startsWith('/api/v1') && whole ? path : undefined;
}

/**
 * The headers of a request as node's server gives them: names in lower case, `Host`, the
 * body's length. Internal.
 */
function incomingHeaders(r: RawRequest, host: string, body: Buffer | undefined): Record<string, string> {
  const out: Record<string, string> = { host };
  for (const name in r.headers) out[name.toLowerCase()] = r.headers[name]!;
  if (body !== undefined) out['content-length'] = String(body.length);
  return out;
}

/** Node's request listener, as the pipeline (and an observer) takes a request. Internal. */
type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** A transport into the server's own pipeline, and how many requests it carried. */
export interface InProcessTransport {
  (r: RawRequest): Promise<RawResponse>;
  /** Requests handed to the pipeline so far (tests: the bots did not go back to HTTP). */
  readonly served: number;
  /**
   * Resolves once no request is open (each answered, or its caller gone), at most `ms` later: a
   * server closing waits for its bots' requests as for its connections' before the store closes.
   */
  idle(ms: number): Promise<void>;
  /**
   * Calls `fn` with every request handed over from now on, before the pipeline has it — as the
   * HTTP server's `request` event does (the scenario coverage counts requests by it).
   */
  observe(fn: Listener): void;
}

/**
 * A client transport (client/transport.ts `Transport`) for the bots embedded in a server: each
 * request is handed to the server's own request listener — the same front, request log,
 * metrics, authentication by key, rate limits, validation, `Idempotency-Key`, commit-ack and
 * error answers as over HTTP — with no socket, no HTTP parsing and no serialising of the
 * response's head. It answers only URLs under `base` + `/api/v1` (the server's own API);
 * anything else is refused, never sent elsewhere. A timeout or an abort rejects as the HTTP
 * transport does, and the pipeline hears of it as of a client that went away.
 *
 * The listener runs in the async context in which the transport was made (the server's), not
 * the calling bot's: what a bot's run holds in an `AsyncLocalStorage` (a plugin's scope, the
 * step watchdog) stays out of the server's handling, as over a socket.
 *
 * @example
 * const transport = inProcessTransport(listener, server.url);
 * createClient({ baseUrl: server.url, apiKey, transport });
 */
export function inProcessTransport(listener: Listener, base: string): InProcessTransport {
  const { origin, host } = new URL(base);
  const api = `${origin}/api/v1`;
  const dispatch = AsyncResource.bind((req: InProcessIncoming, res: CollectedResponse) =>
    listener(req as unknown as IncomingMessage, res as unknown as ServerResponse),
  );
  let served = 0;
  let open = 0;
  const observers: Listener[] = [];
  let waiters: Array<() => void> = [];
  const closed = () => {
    if (--open > 0 || waiters.length === 0) return;
    for (const w of waiters) w();
    waiters = [];
  };
  const idle = (ms: number) =>
    open === 0
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, ms);
          waiters.push(() => (clearTimeout(timer), resolve()));
        });
  const send = (r: RawRequest): Promise<RawResponse> => {
    const path = apiPathOf(r.url, origin);
    if (path === undefined) {
      const err = new TypeError(`in-process transport: ${r.url} is not under ${api}`);
      return Promise.reject(err);
    }
    if (r.signal?.aborted) return Promise.reject(r.signal.reason);
    return new Promise((resolve, reject) => {
      const finish = settleOnce<RawResponse>(r, resolve, reject, (err) => gone(err));
      const body = r.body === undefined ? undefined : Buffer.from(r.body, 'utf8');
      const req = new InProcessIncoming(path, r.method, incomingHeaders(r, host, body), body);
      const answered = (done: CollectedResponse) => finish(undefined, done.answer());
      const res = new CollectedResponse(req, answered, () => finish(new Error('socket hang up')));
      // the caller's error first: the pipeline then hears that its client went away
      const gone = (err: Error) => {
        finish(err);
        res.destroy();
      };
      served++;
      open++;
      res.once('close', closed);
      try {
        const nodeReq = req as unknown as IncomingMessage;
        const nodeRes = res as unknown as ServerResponse;
        for (const fn of observers) fn(nodeReq, nodeRes);
        dispatch(req, res);
      } catch (err) {
        gone(err as Error);
      }
    });
  };
  Object.defineProperty(send, 'served', { get: () => served });
  const observe = (fn: Listener) => void observers.push(fn);
  return Object.assign(send, { idle, observe }) as InProcessTransport;
}
