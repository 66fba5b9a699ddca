import type { IncomingMessage, ServerResponse } from 'node:http';
import proxyaddr from 'proxy-addr';
import type { User } from '../../domain/users/users.js';
import type { RouteCells } from '../../telemetry/http-metrics.js';
import { type EdgeCall, JSON_TYPE, sendJson } from '../../util/http.js';
import { EdgeResponse } from './response.js';

/** A step's continuation: called once, with an error to end the request with it. */
export type Next = (err?: unknown) => void;

/** A step of the edge: does its part of `call`, then `next()` (or `next(err)`, or answers). */
export type Step = (call: Call, next: Next) => void;

/**
 * A step that decides at once when it can (the key's lookup, a limit counted in memory): `true`
 * when the call passed and the caller goes on, `false` when the gate ended the call (through
 * `end`, with its error), or a promise of either when it decides later (a shared store). A call
 * that passes at once costs no continuation (a closure per step and call, as a `Step` needs).
 */
export type Gate = (call: Call, end: Next) => boolean | Promise<boolean>;

/**
 * Runs `go` once a gate's answer came: at once when it passed, after its promise when it
 * decides later (a rejection, or a throw of `go` then, ends the call with that error). Internal.
 */
export function afterGate(passed: boolean | Promise<boolean>, go: () => void, end: Next): void {
  if (passed === true) return go();
  if (passed !== false) passed.then((ok) => ok && go()).catch(end);
}

/** A gate as a `Step`: `next()` once it passed, `next(err)` when it ended the call. */
export function gateStep(gate: Gate): Step {
  return (call, next) => afterGate(gate(call, next), next, next);
}

/** Which hops of `X-Forwarded-For` are trusted (`server.trust_proxy`, as express reads its "trust proxy"). */
export type Trust = (address: string, hop: number) => boolean;

/** `server.trust_proxy` as a function of an address and its hop (express's "trust proxy" values). */
export function compileTrust(value: boolean | number | string): Trust {
  if (value === true) return () => true;
  if (typeof value === 'number') return (_a, hop) => hop < value;
  if (value === false) return proxyaddr.compile([]);
  return proxyaddr.compile(value.split(',').map((v) => v.trim()));
}

/** Replaces the first value of `name` in a kept list (name and value in turn); false if none. Internal. */
function replaceKept(h: string[], name: string, value: string): boolean {
  for (let i = 0; i < h.length; i += 2)
    if (h[i] === name) {
      h[i + 1] = value;
      return true;
    }
  return false;
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
  /** How many rate-limit buckets counted the call (the first sets the `RateLimit` fields, the others add theirs). */
  buckets = 0;
  /** Its log line is counted and summed up, not written (a flood the anonymous limit refuses). */
  quiet = false;
  /** The parsed JSON body (the API's POSTs), undefined before it is read. */
  body: unknown = undefined;
  /** The metrics cells of the route that matched (telemetry/http-metrics.ts), once one has. */
  route: RouteCells | undefined = undefined;
  private address: string | undefined = undefined;
  /**
   * The fields the edge answers with (name and value in turn), kept until the head is written
   * when the response is pinbot's server's (EdgeResponse: the same list, until it sets them);
   * undefined for any other response (the in-process transport's, a test's express app) and
   * one that had fields before the call: they are set on it at once, as `setHeader` does.
   */
  private readonly head: string[] | undefined;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    private readonly trust: Trust,
  ) {
    this.originalUrl = req.url ?? '/';
    this.url = this.originalUrl;
    this.method = req.method ?? 'GET';
    this.head = res instanceof EdgeResponse && !res.fieldsSet ? (res.edgeHead = []) : undefined;
  }

  /** The kept fields, while the response has not set them itself. Internal. */
  private kept(): string[] | undefined {
    const h = this.head;
    return h !== undefined && (this.res as EdgeResponse).edgeHead === h ? h : undefined;
  }

  /** Sets a response field of the edge's (as `setHeader`: a value set before is replaced). */
  setField(name: string, value: string): void {
    const h = this.kept();
    if (h === undefined) return void this.res.setHeader(name, value);
    if (!replaceKept(h, name, value)) h.push(name, value);
  }

  /**
   * Adds a value to a response field of the edge's (as `appendHeader`: one more line of it,
   * after the others of its name).
   */
  appendField(name: string, value: string): void {
    const h = this.kept();
    if (h === undefined) return void this.res.appendHeader(name, value);
    const last = h.lastIndexOf(name);
    if (last === -1 || last % 2 !== 0) h.push(name, value);
    else h.splice(last + 2, 0, name, value);
  }

  /** The first value of a response field of the edge's, if set. */
  field(name: string): string | undefined {
    const h = this.kept();
    if (h === undefined) {
      const v = this.res.getHeader(name);
      return Array.isArray(v) ? v[0] : v === undefined ? undefined : String(v);
    }
    for (let i = 0; i < h.length; i += 2) if (h[i] === name) return h[i + 1];
    return undefined;
  }

  /** Replaces the first value of a response field of the edge's (one of several lines). */
  replaceField(name: string, value: string): void {
    const h = this.kept();
    if (h === undefined) {
      const v = this.res.getHeader(name);
      return void this.res.setHeader(name, Array.isArray(v) ? [value, ...v.slice(1)] : value);
    }
    replaceKept(h, name, value);
  }

  /**
   * Answers `status` with a JSON body that is already a string (util/http.ts `sendJson`): on
   * pinbot's server, the edge's fields, `Content-Type` and `Content-Length` in one `writeHead`.
   */
  sendJson(status: number, body: string): void {
    const h = this.kept();
    // a field set on the response itself (the kept ones with it): node's map, as sendJson does
    if (h === undefined) return sendJson(this.res, status, body);
    const res = this.res as EdgeResponse;
    res.edgeHead = undefined;
    h.push('Content-Type', JSON_TYPE, 'Content-Length', String(Buffer.byteLength(body)));
    res.writeHead(status, h);
    res.end(body);
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
