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
  sleep?: SleepFn;
  /**
   * Who this client polls for (a bot's name): clients sharing a budget get fair shares of its
   * poll room by owner.
   */
  owner?: string;
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

/**
 * The transport under the typed client: auth header, JSON, Idempotency-Key, conditional reads
 * (`If-None-Match` with the ETag of the last answer for that URL; a 304 returns that answer
 * again — a server without ETags is read as before), the rate budget, and the retry policy — 429 waits `Retry-After`; 5xx, timeouts and network errors back off
 * doubling to a cap; 401 throws UnauthorizedError at once; other 4xx throw ApiRequestError.
 * A POST without a key gets a random one, so the client's own retries never repeat an effect.
 */
export class Http {
  readonly base: string;
  readonly budget: RateBudget;
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
    this.budget = opts.budget ?? createRateBudget({ sleep: opts.sleep });
    this.retry = { attempts: 5, baseMs: 500, capMs: 30_000, max429: 10, ...opts.retry };
    this.transport = opts.fetch ? fetchTransport(opts.fetch) : nodeTransport;
    this.sleep = opts.sleep ?? realSleep;
  }

  /** Ms to wait before retry number `attempt` (1-based): doubling with jitter, capped. */
  backoff(attempt: number): number {
    const d = Math.min(this.retry.capMs, this.retry.baseMs * 2 ** (attempt - 1));
    return Math.round(d / 2 + (Math.random() * d) / 2);
  }

  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: longer than 80 lines before the rule; to split (issue 28 item 4)
  async request<T>(method: 'GET' | 'POST' | 'DELETE', template: string, o: RequestOptions = {}): Promise<T> {
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
    const route = `${method} ${template}`;
    const kind = o.kind ?? (method === 'GET' ? 'poll' : 'action');
    const headers: Record<string, string> = {
      'X-API-Key': this.opts.apiKey,
      Accept: 'application/json',
      'User-Agent': 'pinbot-client',
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
    let failures = 0;
    let waits429 = 0;
    // the caller's span (a rule run's step): the budget may run the send later, elsewhere
    const parent = activeContext();
    for (;;) {
      const buckets = ['general', ...(this.learned.get(route) ?? ROUTE_BUCKETS[route] ?? [])];
      let res: RawResponse;
      try {
        res = await this.budget.run({ kind, buckets, signal: o.signal, owner: this.opts.owner }, () =>
          this.send(url, method, headers, payload, o.signal, parent && { parent, route }),
        );
      } catch (err) {
        if (err instanceof AbortedError || o.signal?.aborted) throw err;
        failures++;
        if (failures > this.retry.attempts)
          throw new TransientError(`${route}: ${(err as Error).message} (gave up after ${failures} tries)`, err);
        await this.pause(method, path, failures, this.backoff(failures), (err as Error).message, o.signal);
        continue;
      }
      this.lastDate = res.headers.get('date') ?? this.lastDate;
      const reported = this.budget.observe(res.headers, { notModified: res.status === 304 });
      if (reported.length) this.learned.set(route, reported);
      if (res.status === 304 && cached) {
        this.remember(url, cached);
        return JSON.parse(cached.text) as T;
      }
      const text = res.text;
      if (res.status >= 200 && res.status < 300) {
        const etag = method === 'GET' ? res.headers.get('etag') : null;
        if (etag) this.remember(url, { etag, text });
        return (text ? JSON.parse(text) : undefined) as T;
      }
      let body: ErrorBody | undefined;
      try {
        body = text ? (JSON.parse(text) as ErrorBody) : undefined;
      } catch {
        body = undefined;
      }
      const requestId = res.headers.get('x-request-id') ?? undefined;
      const retryAfterHeader = Number(res.headers.get('retry-after'));
      const retryAfter =
        Number.isFinite(retryAfterHeader) && retryAfterHeader > 0 ? retryAfterHeader : body?.error?.retry_after;
      if (res.status === 401) throw new UnauthorizedError(401, body, method, path, requestId);
      if (res.status === 429) {
        const waitMs = Math.max(1, retryAfter ?? 1) * 1000;
        const exhausted = Object.entries(this.budget.state())
          .filter(([name, b]) => b.remaining === 0 && buckets.includes(name))
          .map(([name]) => name);
        this.budget.block(exhausted.length ? exhausted : buckets, waitMs);
        waits429++;
        if (waits429 > this.retry.max429) throw new ApiRequestError(429, body, method, path, requestId, retryAfter);
        this.opts.onRetry?.({ method, path, attempt: waits429, waitMs, reason: '429 rate_limited' });
        continue; // the budget holds the next try until Retry-After has passed
      }
      const transient = res.status >= 500 || body?.error?.code === 'idempotency_key_in_use';
      if (transient && failures < this.retry.attempts) {
        failures++;
        await this.pause(
          method,
          path,
          failures,
          this.backoff(failures),
          `${res.status} ${body?.error?.code ?? ''}`.trim(),
          o.signal,
        );
        continue;
      }
      throw new ApiRequestError(res.status, body, method, path, requestId, retryAfter);
    }
  }

  /** Keeps an answer for conditional reads: the most recent URLs only. Internal. */
  private remember(url: string, entry: { etag: string; text: string }): void {
    this.tagged.delete(url);
    this.tagged.set(url, entry);
    if (this.tagged.size > MAX_TAGGED) this.tagged.delete(this.tagged.keys().next().value!);
  }

  private async pause(
    method: string,
    path: string,
    attempt: number,
    waitMs: number,
    reason: string,
    signal?: AbortSignal,
  ) {
    this.opts.onRetry?.({ method, path, attempt, waitMs, reason });
    await this.sleep(waitMs, signal);
  }

  /** One try; with tracing on, in a client span whose `traceparent` the request carries. */
  private send(
    url: string,
    method: string,
    headers: Record<string, string>,
    body: string | undefined,
    signal?: AbortSignal,
    traced?: { parent: Context; route: string },
  ): Promise<RawResponse> {
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
