import { parse as parseQuery } from 'node:querystring';
import express from 'express';
import type { DomainEnv } from '../domain/env.js';
import type { Store, Tx } from '../store/core/types.js';
import { markRoute, type RouteCells, routeCells } from '../telemetry/http-metrics.js';
import { inSpan, tracingOn } from '../telemetry/tracing.js';
import { COMMIT_ACK_HEADER, isCommitAck, onceCommitted } from '../util/commit-ack.js';
import { readBody } from '../util/http.js';
import { bindConfig } from './config-bound.js';
import type { Call, Next, Step } from './edge/call.js';
import type { Limiters } from './edge/rate-limit.js';
import type { ChangeCounters } from './reads/change-counters.js';
import { etagOf, matchesAny, notModified } from './reads/etag.js';
import type { ValidatorMemo } from './reads/validator-memo.js';
import type { RouteContext, RouteDef, RouteResult, WriteContext, WriteRoute } from './route.js';
import { check, compileBody, compileStrings } from './validation.js';
import { Claim, type Idempotency, type WriteOutcome } from './writes/idempotency.js';
import { opaquePath } from './writes/path-segments.js';

/** Request bodies: JSON only, at most 100 kB (API.md "Errors"), whatever the Content-Type says. */
const LIMIT = 102_400;
const jsonParser = express.json({ limit: LIMIT, type: () => true, strict: true });

/** A Content-Type the short way takes (none, or JSON in UTF-8); any other goes to body-parser. Internal. */
const PLAIN_JSON = /^application\/json\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/** An error as body-parser would throw it (api/edge/error-answer.ts maps its `type`). Internal. */
const bodyError = (type: string, status: number) => Object.assign(new Error(type), { type, status });

/** Whether a Content-Type is one the short way takes (the common one without a regex). Internal. */
const isPlainJson = (type: string) => type === 'application/json' || PLAIN_JSON.test(type);

/** What body-parser's strict JSON parser makes of a UTF-8 body (BOM dropped, `{}` for none). Internal. */
function parseJson(bytes: Buffer): unknown {
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.length === 0) return {};
  // the first character that is not JSON whitespace, found without a regex's match array
  let i = 0;
  let c = text.charCodeAt(0);
  while (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) c = text.charCodeAt(++i);
  if (c !== 0x7b && c !== 0x5b) throw bodyError('entity.parse.failed', 400); // '{', '['
  try {
    return JSON.parse(text);
  } catch {
    throw bodyError('entity.parse.failed', 400);
  }
}

/**
 * Reads the JSON body of a call. The common request — a declared length within the limit, no
 * Content-Encoding, JSON in UTF-8 or no Content-Type — is read with util/http.ts `readBody` and
 * parsed as body-parser's strict parser would (a tenth of a write's CPU went to body-parser,
 * raw-body and iconv-lite for it: bench/write); anything else (compressed, another charset,
 * chunked, over the limit, no body) goes to body-parser's json itself, its encodings, charsets,
 * limit and errors (api/edge/error-answer.ts maps them onto the catalogue). Internal.
 */
const readJson: Step = (call, next) => {
  const h = call.req.headers;
  const declared = h['content-length'] === undefined ? Number.NaN : Number(h['content-length']);
  const plain =
    h['content-encoding'] === undefined &&
    h['transfer-encoding'] === undefined &&
    (h['content-type'] === undefined || isPlainJson(h['content-type'])) &&
    declared >= 0 &&
    declared <= LIMIT;
  if (plain) {
    // a promise, not a callback on the stream's events: its reaction runs in the async context
    // the call came in (the request's span, a scenario's seeded ids), the stream's would not
    readBody(call.req, LIMIT).then(
      (bytes) => {
        let body: unknown;
        try {
          body = parseJson(bytes);
        } catch (err) {
          return next(err);
        }
        call.body = body;
        next();
      },
      () => next(bodyError('request.aborted', 400)),
    );
    return;
  }
  const req = call.req as typeof call.req & { body?: unknown };
  jsonParser(req as never, call.res as never, (err?: unknown) => {
    if (!err) call.body = req.body;
    next(err);
  });
};

/** The query schema of routes that take none (one object: ajv caches compiled schemas by identity). Internal. */
const NO_QUERY = { type: 'object', additionalProperties: false, properties: {} };

/** What every route's pipeline shares. */
export interface PipelineDeps {
  store: Store;
  env: DomainEnv;
  limiters: Limiters;
  idempotency: Idempotency;
  /** Per-user change counters: conditional reads are answered without a build while no commit concerns the user. */
  counters: ChangeCounters;
  memo: ValidatorMemo;
}

/**
 * One matched call through its route: `params` as matched (decoded), `path` the request's path
 * as sent (no query), which an idempotent write is keyed on.
 */
export type RouteRun = (call: Call, next: Next, params: Record<string, string>, path: string) => void;

/**
 * Gives a call its route's metrics cells: on the call (the request log hands them to the
 * metrics), and on node's request only while tracing is on (its span is named from the request:
 * telemetry/http-tracing.ts) — a property added to every request costs every request. Internal.
 */
function mark(call: Call, cells: RouteCells): void {
  call.route = cells;
  if (tracingOn()) markRoute(call.req, cells);
}

/** Runs `steps` in order, then `last`; the first error goes to `next`. Internal. */
function inOrder(steps: readonly Step[], call: Call, next: Next, last: () => void): void {
  let i = 0;
  const step = (err?: unknown): void => {
    if (err) return next(err);
    const h = steps[i++];
    if (!h) return last();
    try {
      h(call, step);
    } catch (e) {
      next(e);
    }
  };
  step();
}

/**
 * What a read's answer needs of the request: what the client holds, and at which version its
 * lists were built. Internal. */
interface ReadState {
  ifNoneMatch: string | undefined;
  holds: boolean;
  version: string | undefined;
  user: string;
}

const DONE: Promise<void> = Promise.resolve();

/** A write context's `tx` until its transaction runs (a read's stays so): one shape. Internal. */
const NO_TX = undefined as unknown as Tx;

/**
 * The query of a call as express's `simple` parser gave it (a fresh object: validation fills
 * defaults in). Internal. */
function queryOf(call: Call): Record<string, unknown> {
  const q = call.url.indexOf('?');
  return q === -1 ? {} : { ...parseQuery(call.url.slice(q + 1)) };
}

/**
 * The route's steps before its handler: its own rate-limit buckets (those that are on), the
 * JSON body for POSTs (read only now that the route is known and the limits passed), then the
 * buckets that depend on the body. Internal.
 */
function stepsOf(route: RouteDef, limiters: Limiters): Step[] {
  const when = route.bucketWhen ?? {};
  const on = (b: keyof typeof when) => limiters.enabled[b];
  const buckets = (route.buckets ?? []).filter((b) => !when[b] && on(b)).map((b) => limiters[b]);
  const bodyBuckets = (route.buckets ?? []).flatMap((b): Step[] => {
    const holds = when[b];
    return holds && on(b) ? [(call, next) => (holds(call.body) ? limiters[b](call, next) : next())] : [];
  });
  return [...buckets, ...(route.method === 'post' ? [readJson] : []), ...bodyBuckets];
}

/**
 * How a read is answered once what it shows is durable: with `ETag` and 304 where the route
 * has them (a 304 for a tag the client holds is given back to `general` and counted against
 * `conditional`). Internal.
 */
function readAnswers(route: RouteDef, { limiters, memo }: PipelineDeps) {
  const unchanged = async (call: Call, tag: string) => {
    limiters.refund(call);
    await new Promise<void>(
      (resolve, reject) => void limiters.conditional(call, (err?: unknown) => (err ? reject(err) : resolve())),
    );
    call.setField('ETag', tag);
    call.res.statusCode = 304;
    call.res.end();
  };
  const answer = (call: Call, status: number, text: string, read: ReadState): Promise<void> | void => {
    const res = call.res;
    if (route.etag && status === 200) {
      const { ifNoneMatch, holds, version, user } = read;
      const tag = etagOf(text);
      if (version !== undefined) memo.remember(user, call.originalUrl, version, tag);
      if (holds && notModified(ifNoneMatch, tag)) return unchanged(call, tag);
      call.setField('ETag', tag);
      if (notModified(ifNoneMatch, tag)) {
        res.statusCode = 304; // `*`: counted against general like the read it is
        res.end();
        return;
      }
    }
    call.sendJson(status, text);
  };
  return { unchanged, answer };
}

/**
 * A read route's handler run: a tag the client holds is answered from the memo while no commit
 * concerns the user, without building the body; else the body is built and answered once the
 * store is durable — without a promise when nothing waits to be durable (most reads). Internal.
 */
function reader(route: RouteDef, deps: PipelineDeps) {
  const { store, counters, memo } = deps;
  if (!route.etag) return untaggedReader(route, store);
  const { unchanged, answer } = readAnswers(route, deps);
  return (call: Call, ctx: RouteContext): Promise<void> | void => {
    const user = ctx.user;
    const ifNoneMatch = call.req.headers['if-none-match'];
    // `*` says nothing of what the client holds: it is answered, and counted, like any read
    const holds = route.etag === true && ifNoneMatch !== undefined && !matchesAny(ifNoneMatch);
    const version = route.etag && !route.etagSeesClock ? counters.version(user.id) : undefined;
    if (holds && version !== undefined) {
      const tag = memo.current(user.id, call.originalUrl, version);
      if (tag !== undefined && notModified(ifNoneMatch, tag)) return unchanged(call, tag);
    }
    const r = route.handler(ctx as never);
    const text = r.json ?? JSON.stringify(r.body);
    const read: ReadState = { ifNoneMatch, holds, version, user: user.id };
    // no response shows state a crash could still take back (Store.durable)
    if (store.isDurable?.()) return answer(call, r.status, text, read);
    return store.durable().then(() => answer(call, r.status, text, read));
  };
}

/**
 * The run of a read route without tags (`/me`, most reads): the body built (or its text, when
 * the handler has it made) and sent once the store is durable — no If-None-Match, no read
 * state. Internal.
 */
function untaggedReader(route: RouteDef, store: Store) {
  return (call: Call, ctx: RouteContext): Promise<void> | void => {
    const r = route.handler(ctx as never);
    const text = r.json ?? JSON.stringify(r.body);
    // no response shows state a crash could still take back (Store.durable)
    if (store.isDurable?.()) return call.sendJson(r.status, text);
    return store.durable().then(() => call.sendJson(r.status, text));
  };
}

/**
 * A write's transaction (made with the call's key: its commit's cause), resolved once durable —
 * or, for a bot embedded in this server that presents the store's commit-ack token
 * (util/commit-ack.ts), once committed: the bot's state is in the same journal, made durable in
 * commit order, and what it does next commits after this, so a crash loses both or neither; no
 * one else sees the write before it is durable (reads wait for it, the commit feed tells of it
 * then). A store that does not commit at once (PostgreSQL) is always waited for. Internal.
 */
function commit<R>(store: Store, call: Call, fn: (tx: Tx) => R): Promise<R> {
  const options = { cause: call.keyId };
  if (!isCommitAck(store, call.req.headers[COMMIT_ACK_HEADER])) return store.transaction(fn, options);
  return onceCommitted((f: (tx: Tx) => R) => store.transaction(f, options), fn);
}

/**
 * Answers a write's outcome — its status and body; a replayed outcome once it is durable, with
 * `Idempotent-Replayed` — through the call (`Call.sendJson`: the edge's fields and the body's in
 * one `writeHead`, as a read's answer); what stops it goes to `next`. Internal.
 */
function answerWrite(store: Store, call: Call, out: WriteOutcome, next: Next): void {
  if (!out.replayed) return call.sendJson(out.status, out.body);
  const send = () => {
    call.setField('Idempotent-Replayed', 'true');
    call.sendJson(out.status, out.body);
  };
  // an outcome answered at commit (an embedded bot's, see commit) may not be durable yet: a
  // replay shows it to whoever sent the key again only once it is
  if (store.isDurable?.()) return send();
  store.durable().then(send).catch(next);
}

/**
 * `start()`, a throw of it as a rejection: a claimed key is released on every end of its write,
 * even one a store throws before it gives its promise. Internal.
 */
function tried<R>(start: () => Promise<R>): Promise<R> {
  try {
    return start();
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * `answer(r)`, a throw of it given to `next` (a commit's reaction: no promise of its own to
 * reject). Internal.
 */
function answering<R>(answer: (r: R) => void, next: Next): (r: R) => void {
  return (r) => {
    try {
      answer(r);
    } catch (err) {
      next(err);
    }
  };
}

/** The span of a write's transaction, to its durable commit. Internal. */
const SPAN = 'pinbot.store.commit';

/**
 * A write route's handler run: one store transaction made with the call's key (its commit's
 * cause), answered once durable; with `Idempotency-Key`, the key is claimed first (a stored
 * outcome is replayed) and the outcome recorded in the same transaction — or, for a refusal
 * the operation threw, in one of its own. What stops it (a refusal not stored, a store that
 * failed, a key reused) goes to `next`. Callbacks on the commit's promise, not async functions
 * nor a chain: a write makes one promise beside its commit's (an async function made one more
 * each, and each `then` of a chain one more; an `AsyncLocalStorage` — the plugins' — makes
 * every promise cost an async hook's calls on Node 20: bench/tools/write-micro.ts). Internal.
 */
function writer(route: WriteRoute, { store, idempotency }: PipelineDeps) {
  // the span's attributes are the route's: made once, not per call
  const attributes = { 'pinbot.route': `/api/v1${route.path}` };
  // the answer's text is made in the transaction (as a keyed write's outcome is): only a string
  // waits for the fsync, not the answer's objects
  const run = (ctx: WriteContext, tx: Tx) => {
    const r: RouteResult = route.handler(((ctx.tx = tx), ctx));
    return { status: r.status, text: JSON.stringify(r.body) };
  };
  const plain = (call: Call, ctx: WriteContext, next: Next): void => {
    // a span (with tracing on) from the transaction to its durable commit: the bots it wakes
    // are its children
    const committed = inSpan(SPAN, attributes, () => commit(store, call, (tx) => run(ctx, tx)));
    committed.then(
      answering((r) => call.sendJson(r.status, r.text), next),
      next,
    );
  };
  const claimed = (call: Call, ctx: WriteContext, claim: Claim, next: Next): void => {
    const op = (tx: Tx) => route.handler(((ctx.tx = tx), ctx));
    // the key is released when the write has ended, whatever its end (before its outcome is
    // read: both are synchronous, nothing runs between them)
    const ended = answering((out: Parameters<Claim['outcome']>[0]) => {
      claim.release();
      answerWrite(store, call, claim.outcome(out), next);
    }, next);
    const failed = (err: unknown) => {
      claim.release();
      next(err);
    };
    const run = () => tried(() => commit(store, call, (tx) => claim.run(tx, op)));
    const committed = inSpan(SPAN, attributes, run);
    committed.then(ended, (err: unknown) => {
      const refusal = claim.refusal(err);
      if (!refusal) return failed(err);
      // the refusal, recorded as the key's outcome in a transaction (and a span) of its own
      const recorded = () => tried(() => commit(store, call, (tx) => claim.refused(tx, refusal)));
      inSpan(SPAN, attributes, recorded).then(ended, failed);
    });
  };
  const post = route.method === 'post';
  return (call: Call, ctx: WriteContext, path: string, next: Next): void => {
    const key = post ? call.req.headers['idempotency-key'] : undefined;
    // keyed on the path as sent (ids are opaque: see opaquePath)
    const target = typeof key === 'string' ? `${call.method} ${opaquePath(path)}` : '';
    const body = call.body;
    const user = ctx.user.id;
    let claim: WriteOutcome | Claim | undefined;
    if (typeof key === 'string') claim = idempotency.claim({ target, body }, user, key);
    if (claim === undefined) return plain(call, ctx, next);
    if (!(claim instanceof Claim)) return answerWrite(store, call, claim, next);
    claimed(call, ctx, claim, next);
  };
}

/**
 * Compiles a route once, at start-up, into the function that serves it: its steps (stepsOf),
 * validation of params, query and body, then the handler — a read (reader) or a write (writer).
 */
export function compileRoute(route: RouteDef, deps: PipelineDeps): RouteRun {
  const { env, store } = deps;
  const bind = <T>(s: T) => bindConfig(s, env.config);
  const body = route.schemas.body ? compileBody(bind(route.schemas.body)) : undefined;
  const query = compileStrings(bind(route.schemas.query ?? NO_QUERY));
  const noQuery = route.schemas.query === undefined;
  const params = route.schemas.params ? compileStrings(bind(route.schemas.params)) : undefined;
  const post = route.method === 'post';
  const steps = stepsOf(route, deps.limiters);
  const read = route.write ? undefined : reader(route, deps);
  const write = route.write ? writer(route, deps) : undefined;

  /** Serves a matched call; throws (or rejects, or gives `next`) for the error answer. */
  type Params = Record<string, string>;
  const serve = (call: Call, next: Next, ctxParams: Params, path: string): Promise<void> | void => {
    if (params) check(params, 'params', ctxParams);
    // a route that takes no query, called without one, has nothing to check (most reads)
    const bare = noQuery && call.url.indexOf('?') === -1;
    const ctxQuery = bare ? {} : queryOf(call);
    if (!bare) check(query, 'query', ctxQuery);
    // the body as read stays on the call (an idempotent write is keyed on it); the handler's is `{}` when none came
    const ctxBody = post ? (call.body ?? {}) : call.body;
    if (post && body) check(body, 'body', ctxBody);
    // one object, `tx` set by a write's transaction when it runs (no copy of it per transaction)
    const user = call.user!;
    const db = store.read;
    const ctx = { user, body: ctxBody, query: ctxQuery, params: ctxParams, env, db, tx: NO_TX };
    return read ? read(call, ctx) : write!(call, ctx, path, next);
  };
  /** `serve`, its throw or rejection given to `next`. */
  const guarded = (call: Call, next: Next, p: Record<string, string>, path: string): Promise<void> => {
    try {
      const out = serve(call, next, p, path);
      return out ? out.catch(next) : DONE;
    } catch (err) {
      next(err);
      return DONE;
    }
  };
  // the route's label in the metrics and the server span (telemetry/): its pattern, never the path
  const cells = routeCells(`/api/v1${route.path}`);
  // a read with rate limits off has nothing before its handler
  if (steps.length === 0) return (call, next, p, path) => void (mark(call, cells), guarded(call, next, p, path));
  return (call, next, p, path) => (mark(call, cells), inOrder(steps, call, next, () => guarded(call, next, p, path)));
}
