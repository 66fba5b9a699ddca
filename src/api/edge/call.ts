import type { IncomingMessage, ServerResponse } from 'node:http';
import proxyaddr from 'proxy-addr';
import type { User } from '../../domain/users/users.js';
import type { EdgeCall } from '../../util/http.js';

/** A step's continuation: called once, with an error to end the request with it. */
export type Next = (err?: unknown) => void;

/** A step of the edge: does its part of `call`, then `next()` (or `next(err)`, or answers). */
export type Step = (call: Call, next: Next) => void;

/** Which hops of `X-Forwarded-For` are trusted (`server.trust_proxy`, as express reads its "trust proxy"). */
export type Trust = (address: string, hop: number) => boolean;

/** `server.trust_proxy` as a function of an address and its hop (express's "trust proxy" values). */
export function compileTrust(value: boolean | number | string): Trust {
  if (value === true) return () => true;
  if (typeof value === 'number') return (_a, hop) => hop < value;
  if (value === false) return proxyaddr.compile([]);
  return proxyaddr.compile(value.split(',').map((v) => v.trim()));
}

/** What the last rate-limit bucket counted for a call (its refusal's Retry-After, a refund). */
export interface WindowInfo {
  limit: number;
  used: number;
  remaining: number;
  /** When the window ends (ms on the server's clock), if the store says. */
  resetAt: number | undefined;
  key: string;
}

/**
 * One request through pinbot's HTTP edge, made once when it arrives, with every field set in
 * the constructor (one hidden class for all of them: nothing is added to node's request or
 * response, whose shapes stay node's). Every step of the API (the front, auth, rate limits,
 * the route's pipeline, the error answer, the log line) reads and writes it; mounted services
 * (plugins' routes, the console) are given it (`EdgeCall`).
 */
export class Call implements EdgeCall {
  /** The request id: a well-formed `X-Request-Id` sent, else a UUID (request-log.ts). */
  id = '';
  /** `performance.now()` when the edge took it. */
  started = 0;
  /** The target as sent (what the log line shows). */
  originalUrl: string;
  /** The target in origin form (path and query). */
  url: string;
  readonly method: string;
  /** Who the key belongs to, once authenticated (api/edge/auth.ts). */
  user: User | undefined = undefined;
  /** The id of the key: the cause of the call's writes (`store.transaction(fn, { cause })`). */
  keyId: string | undefined = undefined;
  /** What the last rate-limit bucket counted. */
  rateLimit: WindowInfo | undefined = undefined;
  /** Its log line is counted and summed up, not written (a flood the anonymous limit refuses). */
  quiet = false;
  /** The parsed JSON body (the API's POSTs), undefined before it is read. */
  body: unknown = undefined;
  private address: string | undefined = undefined;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    private readonly trust: Trust,
  ) {
    this.originalUrl = req.url ?? '/';
    this.url = this.originalUrl;
    this.method = req.method ?? 'GET';
  }

  /** The client's address (through the trusted proxies: `server.trust_proxy`), read once. */
  get ip(): string {
    if (this.address === undefined) this.address = proxyaddr(this.req, this.trust);
    return this.address;
  }

  /** The value of a request header (the first, when sent several times). */
  header(name: string): string | undefined {
    const v = this.req.headers[name];
    return Array.isArray(v) ? v[0] : v;
  }
}
