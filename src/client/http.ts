import { randomUUID } from 'node:crypto';
import { ApiRequestError, TransientError, UnauthorizedError } from './errors.js';
import { createRateBudget, type RateBudget, type RequestKind } from './rate-budget.js';
import { AbortedError, sleep as realSleep, type SleepFn } from './sleep.js';
import { fetchTransport, nodeTransport, type RawResponse, type Transport } from './transport.js';
import type { ErrorBody } from './types.js';
import { activeContext, inSpan, injectTraceHeaders, SpanKind, type Context } from '../telemetry/tracing.js';

export interface RetryOptions {
  /** Tries after the first for 5xx, network errors and timeouts. */
  attempts?: number;
  /** First backoff; each next one doubles. */
  baseMs?: number;
  /** Longest backoff. */
  capMs?: number;
  /** 429 answers waited out (each for its Retry-After) before giving up. */
  max429?: number;
}

export interface HttpOptions {
  /** Server base URL (`http://127.0.0.1:3000`), with or without `/api/v1`. */
  baseUrl: string;
  apiKey: string;
  budget?: RateBudget;
  retry?: RetryOptions;
  /** Per attempt. */
  timeoutMs?: number;
  /** Send requests with this fetch instead of node:http (other runtimes, tests). */
  fetch?: typeof fetch;
  /**
   * Send requests with this transport instead (a bot embedded in the server: the server's own
   * pipeline, in process, api/in-process.ts); before `fetch`.
   */
  transport?: Transport;
  sleep?: SleepFn;
  /**
   * Who this client polls for (a bot's name): clients sharing a budget get fair shares of its
   * poll room by owner.
   */
  owner?: string;
  /** Sent with every request besides the client's own (a bot embedded in the server: its commit-ack token). */
  headers?: Record<string, string>;
  /** Told about every retry (for logs). */
  onRetry?: (info: { method: string; path: string; attempt: number; waitMs: number; reason: string }) => void;
}

export interface RequestOptions {
  /** Path template (`/wallet/transactions/:id/accept`) and its values. */
  params?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  idempotencyKey?: string;
  /** `poll` for background reads (paced, lower priority); default: GET is poll, others action. */
  kind?: RequestKind;
  signal?: AbortSignal;
}

/** Answers kept per client for `If-None-Match` (the lists a bot polls, plus a few). Internal. */
const MAX_TAGGED = 16;

/** Buckets each route counts against besides `general` (API.md "Rate limits"). Internal. */
const ROUTE_BUCKETS: Record<string, string[]> = {
  'POST /messages/send': ['messages'],
  'POST /conversations/:id/messages': ['messages'],
  'POST /contacts/request': ['contacts'],
  'POST /introductions': ['intros'],
  // Only when creating a group; the answer tells which buckets a request counted against.
  'POST /conversations': ['groups'],
};

/** One request, as made once for all its tries. Internal. */
interface Call {
  method: string;
  /** `METHOD template`: what buckets and spans are keyed by. */
  route: string;
  path: string;
  url: string;
  kind: RequestKind;
  headers: Record<string, string>;
  payload?: string;
  /** The kept answer its `If-None-Match` names. */
  cached?: { etag: string; text: string };
  signal?: AbortSignal;
  /** The caller's span, with tracing on. */
  parent?: Context;
}

/** The error body, request id and Retry-After of a failed answer. Internal. */
function readFailure(res: RawResponse) {
  let body: ErrorBody | undefined;
  try {
    body = res.text ? (JSON.parse(res.text) as ErrorBody) : undefined;
  } catch {
    body = undefined;
  }
  const requestId = res.headers.get('x-request-id') ?? undefined;
  const header = Number(res.headers.get('retry-after'));
  const retryAfter = Number.isFinite(header) && header > 0 ? header : body?.error?.retry_after;
  return {
    body,
    retryAfter,
    /** The arguments of an ApiRequestError after its status. */
    args: (call: Call) => [body, call.method, call.path, requestId, retryAfter] as const,
  };
}

/**
 * The transport under the typed client: auth header, JSON, Idempotency-Key, conditional reads
 * (`If-None-Match` with the ETag of the last answer for that URL; a 304 returns that answer
 * again — a server without ETags is read as before), the rate budget, and the retry policy —
 * 429 waits `Retry-After`; 5xx, timeouts and network errors back off
 * doubling to a cap; 401 throws UnauthorizedError at once; other 4xx throw ApiRequestError.
 * A POST without a key gets a random one, so the client's own retries never repeat an effect.
 */
export class Http {
  readonly base: string;
  private shared: RateBudget;
  /** The `Date` header of the last response (the server's clock, to a second). */
  lastDate?: string;
  private readonly learned = new Map<string, string[]>();
  private readonly retry: Required<RetryOptions>;
  private readonly transport: Transport;
  private readonly sleep: SleepFn;
  /** The last answers to GETs that carried an ETag, by URL (a few: polls repeat the same URLs). */
  private readonly tagged = new Map<string, { etag: string; text: string }>();

  constructor(private readonly opts: HttpOptions) {
    const trimmed = opts.baseUrl.replace(/\/+$/, '');
    this.base = trimmed.endsWith('/api/v1') ? trimmed : `${trimmed}/api/v1`;
    this.shared = opts.budget ?? createRateBudget({ sleep: opts.sleep });
    this.retry = { attempts: 5, baseMs: 500, capMs: 30_000, max429: 10, ...opts.retry };
    this.transport = opts.transport ?? (opts.fetch ? fetchTransport(opts.fetch) : nodeTransport);
    this.sleep = opts.sleep ?? realSleep;
  }

  /** The rate budget the client's requests wait on. */
  get budget(): RateBudget {
    return this.shared;
  }

  /**
   * Moves the client onto `budget`, shared with the other clients of its user (the server counts
   * every key of a user together): for a client made before its user was known, which `GET /me`
   * then told. A request already waiting keeps the budget it waits on.
   */
  shareBudget(budget: RateBudget): void {
    this.shared = budget;
  }

  /** Ms to wait before retry number `attempt` (1-based): doubling with jitter, capped. */
  backoff(attempt: number): number {
    const d = Math.min(this.retry.capMs, this.retry.baseMs * 2 ** (attempt - 1));
    return Math.round(d / 2 + (Math.random() * d) / 2);
  }

  async request<T>(method: 'GET' | 'POST' | 'DELETE', template: string, o: RequestOptions = {}): Promise<T> {
    const call = this.prepare(method, template, o);
    const tries = { failures: 0, waits429: 0 };
    for (;;) {
      const buckets = ['general', ...(this.learned.get(call.route) ?? ROUTE_BUCKETS[call.route] ?? [])];
      let res: RawResponse;
      try {
        res = await this.budget.run({ kind: call.kind, buckets, signal: o.signal, owner: this.opts.owner }, () =>
          this.send(call, call.parent && { parent: call.parent, route: call.route }),
        );
      } catch (err) {
        if (err instanceof AbortedError || o.signal?.aborted) throw err;
        if (++tries.failures > this.retry.attempts)
          throw new TransientError(
            `${call.route}: ${(err as Error).message} (gave up after ${tries.failures} tries)`,
            err,
          );
        await this.pause(call, tries.failures, this.backoff(tries.failures), (err as Error).message);
        continue;
      }
      const answer = this.answer<T>(call, res, buckets, tries);
      if (answer.done) return answer.value;
      if (answer.waitMs !== undefined) await this.pause(call, tries.failures, answer.waitMs, answer.reason);
    }
  }

  /** The URL, headers and body of a request, made once for all its tries. Internal. */
  private prepare(method: string, template: string, o: RequestOptions): Call {
    const path = template.replace(/:(\w+)/g, (_, name: string) => {
      const v = o.params?.[name];
      if (v === undefined || v === '') throw new TypeError(`${template}: missing path parameter ${name}`);
      return encodeURIComponent(v);
    });
    const qs = Object.entries(o.query ?? {})
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
      .join('&');
    const url = `${this.base}${path}${qs ? `?${qs}` : ''}`;
    const headers: Record<string, string> = {
      'X-API-Key': this.opts.apiKey,
      Accept: 'application/json',
      'User-Agent': 'pinbot-client',
      ...this.opts.headers,
    };
    let payload: string | undefined;
    // a conditional read when the server gave an ETag for this URL: 304 costs no body
    const cached = method === 'GET' ? this.tagged.get(url) : undefined;
    if (cached) headers['If-None-Match'] = cached.etag;
    if (method === 'POST') {
      payload = JSON.stringify(o.body ?? {});
      headers['Content-Type'] = 'application/json';
      headers['Idempotency-Key'] = o.idempotencyKey ?? `pinbot-${randomUUID()}`;
    }
    const route = `${method} ${template}`;
    const kind = o.kind ?? (method === 'GET' ? 'poll' : 'action');
    // the caller's span (a rule run's step): the budget may run the send later, elsewhere
    return { method, route, path, url, kind, headers, payload, cached, signal: o.signal, parent: activeContext() };
  }

  /**
   * What an answer means: the value (2xx, or a 304 of a kept answer), another try (after a 429
   * the budget holds it until Retry-After; a transient failure within `retry.attempts` waits
   * `waitMs`), or an error thrown. Internal.
   */
  private answer<T>(
    call: Call,
    res: RawResponse,
    buckets: string[],
    tries: { failures: number; waits429: number },
  ): { done: true; value: T } | { done: false; waitMs?: number; reason: string } {
    this.lastDate = res.headers.get('date') ?? this.lastDate;
    const reported = this.budget.observe(res.headers, { notModified: res.status === 304 });
    if (reported.length) this.learned.set(call.route, reported);
    if (res.status === 304 && call.cached) {
      this.remember(call.url, call.cached);
      return { done: true, value: JSON.parse(call.cached.text) as T };
    }
    const text = res.text;
    if (res.status >= 200 && res.status < 300) {
      const etag = call.method === 'GET' ? res.headers.get('etag') : null;
      if (etag) this.remember(call.url, { etag, text });
      return { done: true, value: (text ? JSON.parse(text) : undefined) as T };
    }
    const failure = readFailure(res);
    if (res.status === 401) throw new UnauthorizedError(401, ...failure.args(call));
    if (res.status === 429) {
      this.wait429(call, buckets, tries, failure);
      return { done: false, reason: '429 rate_limited' };
    }
    const transient = res.status >= 500 || failure.body?.error?.code === 'idempotency_key_in_use';
    if (transient && tries.failures < this.retry.attempts) {
      tries.failures++;
      const reason = `${res.status} ${failure.body?.error?.code ?? ''}`.trim();
      return { done: false, waitMs: this.backoff(tries.failures), reason };
    }
    throw new ApiRequestError(res.status, ...failure.args(call));
  }

  /**
   * A 429: the buckets it exhausted (or all of the request's) are blocked until Retry-After, so
   * the budget holds the next try; past `max429` waits it is thrown. Internal.
   */
  private wait429(
    call: Call,
    buckets: string[],
    tries: { waits429: number },
    failure: ReturnType<typeof readFailure>,
  ): void {
    const waitMs = Math.max(1, failure.retryAfter ?? 1) * 1000;
    const exhausted = Object.entries(this.budget.state())
      .filter(([name, b]) => b.remaining === 0 && buckets.includes(name))
      .map(([name]) => name);
    this.budget.block(exhausted.length ? exhausted : buckets, waitMs);
    tries.waits429++;
    if (tries.waits429 > this.retry.max429) throw new ApiRequestError(429, ...failure.args(call));
    this.opts.onRetry?.({
      method: call.method,
      path: call.path,
      attempt: tries.waits429,
      waitMs,
      reason: '429 rate_limited',
    });
  }

  /** Keeps an answer for conditional reads: the most recent URLs only. Internal. */
  private remember(url: string, entry: { etag: string; text: string }): void {
    this.tagged.delete(url);
    this.tagged.set(url, entry);
    if (this.tagged.size > MAX_TAGGED) this.tagged.delete(this.tagged.keys().next().value!);
  }

  private async pause(call: Call, attempt: number, waitMs: number, reason: string) {
    this.opts.onRetry?.({ method: call.method, path: call.path, attempt, waitMs, reason });
    await this.sleep(waitMs, call.signal);
  }

  /** One try; with tracing on, in a client span whose `traceparent` the request carries. */
  private send(call: Call, traced?: { parent: Context; route: string }): Promise<RawResponse> {
    const { url, method, headers, payload: body, signal } = call;
    const timeoutMs = this.opts.timeoutMs ?? 30_000;
    if (!traced) return this.transport({ url, method, headers, body, signal, timeoutMs });
    const attributes = {
      'http.request.method': method,
      'url.template': traced.route.slice(method.length + 1),
      'server.address': new URL(url).host,
    };
    return inSpan(
      traced.route,
      attributes,
      async (span) => {
        const h = { ...headers };
        injectTraceHeaders(h);
        const res = await this.transport({ url, method, headers: h, body, signal, timeoutMs });
        span?.setAttribute('http.response.status_code', res.status);
        return res;
      },
      { kind: SpanKind.CLIENT, parent: traced.parent },
    );
  }
}
