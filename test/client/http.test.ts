import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/client.js';
import { ApiRequestError, TransientError, UnauthorizedError } from '../../src/client/errors.js';
import { createRateBudget } from '../../src/client/rate-budget.js';
import { parseRateLimitHeaders } from '../../src/client/rate-limit-headers.js';

type Handler = (req: IncomingMessage & { body: string }, res: ServerResponse) => void;

/** A scripted HTTP server: each request is answered by the next handler (the last repeats). */
async function scripted(handlers: Handler[]) {
  const seen: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const h = handlers[Math.min(seen.length - 1, handlers.length - 1)]!;
      h(Object.assign(req, { body }), res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
const err = (status: number, code: string, headers: Record<string, string> = {}) =>
  json(status, { error: { code, message: code } }, headers);

let closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
});

async function setup(handlers: Handler[]) {
  const s = await scripted(handlers);
  closers.push(s.close);
  const sleeps: number[] = [];
  const client = createClient({
    baseUrl: s.url,
    apiKey: 'pinbot_test',
    retry: { attempts: 3, baseMs: 100, capMs: 250 },
    sleep: async (ms) => void sleeps.push(ms),
  });
  return { ...s, client, sleeps };
}

describe('client transport', () => {
  it('sends the key, JSON and an Idempotency-Key on POST, and parses the answer', async () => {
    const s = await setup([json(201, { message: 'sent', transaction: { id: 'txn_1', status: 'pending' } })]);
    const r = await s.client.wallet.send({ recipient_pin: 'ABC123', amount: 5 }, { idempotencyKey: 'k-1' });
    expect(r.transaction.id).toBe('txn_1');
    expect(s.seen[0]).toMatchObject({
      method: 'POST',
      url: '/api/v1/wallet/send',
      body: '{"recipient_pin":"ABC123","amount":5}',
    });
    expect(s.seen[0]!.headers['x-api-key']).toBe('pinbot_test');
    expect(s.seen[0]!.headers['idempotency-key']).toBe('k-1');
  });

  it('makes up an Idempotency-Key when none is given and keeps it across retries', async () => {
    const s = await setup([err(503, 'unavailable'), json(200, { id: 'int_1', status: 'accepted' })]);
    await s.client.introductions.accept('int_1');
    expect(s.seen).toHaveLength(2);
    const key = s.seen[0]!.headers['idempotency-key'];
    expect(key).toMatch(/^pinbot-/);
    expect(s.seen[1]!.headers['idempotency-key']).toBe(key);
  });

  it('encodes path parameters and query strings', async () => {
    const s = await setup([json(200, { messages: [], timestamp: 5, has_more: false })]);
    await s.client.conversations.messages('cnv_a/b', { since: 5, limit: 10 });
    expect(s.seen[0]!.url).toBe('/api/v1/conversations/cnv_a%2Fb/messages?since=5&limit=10');
  });

  it('backs off doubling up to the cap on 5xx, then gives up with the last answer', async () => {
    const s = await setup([err(500, 'internal_error')]);
    const e = await s.client.me().catch((x) => x);
    expect(e).toBeInstanceOf(ApiRequestError);
    expect(e.status).toBe(500);
    expect(s.seen).toHaveLength(4);
    // jitter keeps each wait within [d/2, d] for d = 100, 200, 250 (capped)
    expect(s.sleeps).toHaveLength(3);
    const caps = [100, 200, 250];
    s.sleeps.forEach((ms, i) => {
      expect(ms).toBeGreaterThanOrEqual(caps[i]! / 2);
      expect(ms).toBeLessThanOrEqual(caps[i]!);
    });
  });

  it('treats 401 as fatal: no retry', async () => {
    const s = await setup([err(401, 'unauthorized')]);
    await expect(s.client.me()).rejects.toBeInstanceOf(UnauthorizedError);
    expect(s.seen).toHaveLength(1);
  });

  it('does not retry business errors and exposes the code', async () => {
    const s = await setup([err(409, 'transaction_not_pending')]);
    const e = await s.client.wallet.accept('txn_1').catch((x) => x);
    expect(e).toBeInstanceOf(ApiRequestError);
    expect(e.code).toBe('transaction_not_pending');
    expect(s.seen).toHaveLength(1);
  });

  it('waits Retry-After on 429 and retries', async () => {
    const s = await setup([
      err(429, 'rate_limited', { 'Retry-After': '2', RateLimit: '"general"; r=0; t=2' }),
      json(200, { id: 'usr_1' }),
    ]);
    const waits: number[] = [];
    let t = 1_000_000;
    const sleep = async (ms: number) => {
      waits.push(ms);
      t += ms;
    };
    const budget = createRateBudget({ now: () => t, sleep });
    const client = createClient({ baseUrl: s.url, apiKey: 'k', budget, sleep });
    expect(await client.me()).toEqual({ id: 'usr_1' });
    expect(waits).toEqual([2000]);
    expect(s.seen).toHaveLength(2);
  });

  it('gives up on network errors after the retries with a TransientError', async () => {
    const client = createClient({
      baseUrl: 'http://127.0.0.1:9',
      apiKey: 'k',
      retry: { attempts: 2, baseMs: 1 },
      sleep: async () => undefined,
    });
    await expect(client.me()).rejects.toBeInstanceOf(TransientError);
  });
});

describe('RateLimit headers', () => {
  it('reads draft 8 lists with several buckets', () => {
    const h = new Headers();
    h.append('RateLimit', '"general"; r=99; t=60');
    h.append('RateLimit', '"messages"; r=29; t=58');
    h.append('RateLimit-Policy', '"general"; q=100; w=60; pk=:YWJj:');
    h.append('RateLimit-Policy', '"messages"; q=30; w=60; pk=:YWJj:');
    expect(parseRateLimitHeaders(h)).toEqual([
      { name: 'general', remaining: 99, resetSec: 60, limit: 100, windowSec: 60 },
      { name: 'messages', remaining: 29, resetSec: 58, limit: 30, windowSec: 60 },
    ]);
  });
  it('reads draft 7 and draft 6', () => {
    expect(parseRateLimitHeaders(new Headers({ RateLimit: 'limit=10, remaining=3, reset=5' }))).toEqual([
      { name: 'default', limit: 10, remaining: 3, resetSec: 5 },
    ]);
    expect(
      parseRateLimitHeaders(
        new Headers({ 'RateLimit-Limit': '10', 'RateLimit-Remaining': '4', 'RateLimit-Reset': '7' }),
      ),
    ).toEqual([{ name: 'default', limit: 10, remaining: 4, resetSec: 7 }]);
  });
});
