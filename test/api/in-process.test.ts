import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeTransport, type RawResponse, type Transport } from '../../src/client/transport.js';
import { createClient } from '../../src/client/client.js';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { configFrom } from '../../src/config/load.js';
import { createKey } from '../../src/domain/users/keys.js';
import { createUser, Users } from '../../src/domain/users/users.js';
import { Messages } from '../../src/domain/messaging/collections.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { metrics } from '../../src/telemetry/metrics.js';
import { inProcessTransport } from '../../src/api/in-process.js';
import { tempDir } from '../helpers/api.js';

/** The request id of a log line, if it is a request's. */
const idOf = (l: Record<string, unknown>) => (l.req as { id?: string } | undefined)?.id;

/** A logger whose lines the test reads. */
function logLines() {
  const lines: Array<Record<string, unknown> & { msg: string }> = [];
  const log = pino(
    { level: 'debug' },
    new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }),
  );
  return { lines, log };
}

/** The response headers a client reads (client/http.ts, rate-budget.ts, identity.ts). */
const READ = [
  'content-type',
  'content-length',
  'ratelimit',
  'ratelimit-policy',
  'retry-after',
  'etag',
  'idempotent-replayed',
  'www-authenticate',
];

/** One request through `t`: its status, body and the headers the client reads. */
async function send(
  t: Transport,
  url: string,
  o: { method?: string; key?: string; body?: unknown; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = {
    Accept: 'application/json',
    'User-Agent': 'pinbot-client',
  };
  if (o.key) headers['X-API-Key'] = o.key;
  const body = o.body === undefined ? undefined : JSON.stringify(o.body);
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res: RawResponse = await t({
    url,
    method: o.method ?? (body === undefined ? 'GET' : 'POST'),
    headers: { ...headers, ...o.headers },
    body,
    timeoutMs: 10_000,
  });
  const pairs = READ.map((h) => [h, res.headers.get(h)] as const);
  const read = Object.fromEntries(pairs.filter(([, v]) => v !== null));
  return {
    status: res.status,
    body: res.text === '' ? undefined : (JSON.parse(res.text) as Record<string, unknown>),
    headers: read as Record<string, string>,
    requestId: res.headers.get('x-request-id'),
    date: res.headers.get('date'),
  };
}

/**
 * Answers as compared: the request id is the call's own (a fresh UUID), and `RateLimit` says
 * what is left, one less for each request counted (checked on its own).
 */
function same(a: Awaited<ReturnType<typeof send>>) {
  const { ratelimit: _, ...headers } = a.headers;
  return { status: a.status, body: a.body, headers };
}

describe('the in-process transport answers as HTTP does', () => {
  let server: RunningServer;
  let tmp: ReturnType<typeof tempDir>;
  let base: string;
  let inProcess: Transport;
  const { lines, log } = logLines();
  const user = async (name: string) =>
    server.store.transaction((tx) => {
      const u = createUser(tx, server.env, { name });
      return { user: u, key: createKey(tx, server.env, u.id).api_key };
    });

  beforeAll(async () => {
    tmp = tempDir();
    // windows of an hour: the virtual clock does not move, nothing resets during the test
    const config = configFrom({
      rate_limits: {
        enabled: true,
        general: { limit: 50, window: '1h' },
        messages: { limit: 3, window: '1h' },
      },
    });
    server = await startServer({
      dataDir: tmp.dir,
      config,
      clock: new VirtualClock(Date.parse('2026-11-21T12:00:00Z')),
      host: '127.0.0.1',
      port: 0,
      log,
      services: [],
    });
    base = `${server.url}/api/v1`;
    inProcess = server.inProcess!;
  });
  afterAll(async () => {
    await server?.close();
    tmp?.cleanup();
  });

  it('GET /me: the same status, body and headers, counted in one rate-limit window', async () => {
    const alice = await user('Alice');
    const overHttp = await send(nodeTransport, `${base}/me`, { key: alice.key });
    const inProc = await send(inProcess, `${base}/me`, { key: alice.key });
    expect(inProc.status).toBe(200);
    expect(inProc.body).toEqual(overHttp.body);
    expect(inProc.headers['content-type']).toBe(overHttp.headers['content-type']);
    expect(inProc.headers['ratelimit-policy']).toBe(overHttp.headers['ratelimit-policy']);
    // one window for both: the in-process request is the next one counted
    const left = (h: Record<string, string>) => Number(/r=(\d+)/.exec(h.ratelimit!)![1]);
    expect(left(inProc.headers)).toBe(left(overHttp.headers) - 1);
    expect(inProc.requestId).toMatch(/^[0-9a-f-]{36}$/);
    // the server's clock, as node's Date header would say it
    expect(inProc.date).toBe(overHttp.date);
    expect(inProc.date).toBe('Sat, 21 Nov 2026 12:00:00 GMT');
  });

  it('401 for a bad key, 404 for no route, 400 for a bad body: the same answers', async () => {
    let n = 0;
    for (const [path, body, key] of [
      ['/me', undefined, 'pk_live_not-a-key'],
      ['/me', undefined, ''],
      ['/no-such-route', undefined, undefined],
      ['/messages/send', { recipient_pin: 'x', content: 'hi' }, undefined],
      ['/messages/send', { content: 'no recipient' }, undefined],
      ['/me?unknown=1', undefined, undefined],
    ] as const) {
      // a user of its own each: the two requests of a case are counted in one window
      const bob = await user(`Bob ${++n}`);
      const url = `${base}${path}`;
      const o = { key: key === undefined ? bob.key : key || undefined, body };
      const overHttp = same(await send(nodeTransport, url, o));
      const inProc = same(await send(inProcess, url, o));
      expect(inProc, `${url} ${JSON.stringify(o)}`).toEqual(overHttp);
      expect(inProc.status).toBeGreaterThanOrEqual(400);
    }
  });

  it('rate limits: one budget over both, 429 with Retry-After and the same body', async () => {
    const carol = await user('Carol');
    const dave = await user('Dave');
    const to = (n: number) => ({
      key: carol.key,
      body: { recipient_pin: dave.user.pin_code, content: `m${n}` },
    });
    expect((await send(nodeTransport, `${base}/messages/send`, to(1))).status).toBe(201);
    expect((await send(inProcess, `${base}/messages/send`, to(2))).status).toBe(201);
    expect((await send(nodeTransport, `${base}/messages/send`, to(3))).status).toBe(201);
    const inProc = await send(inProcess, `${base}/messages/send`, to(4));
    const overHttp = await send(nodeTransport, `${base}/messages/send`, to(5));
    expect(inProc.status).toBe(429);
    expect(Number(inProc.headers['retry-after'])).toBeGreaterThan(0);
    expect(same(inProc)).toEqual(same(overHttp));
    expect(inProc.body).toMatchObject({ error: { code: 'rate_limited' } });
  });

  it('Idempotency-Key: an outcome stored over one is replayed over the other', async () => {
    const erin = await user('Erin');
    const frank = await user('Frank');
    const o = {
      key: erin.key,
      body: { recipient_pin: frank.user.pin_code, content: 'once' },
      headers: { 'Idempotency-Key': 'k-1' },
    };
    const first = await send(inProcess, `${base}/messages/send`, o);
    const again = await send(nodeTransport, `${base}/messages/send`, o);
    const third = await send(inProcess, `${base}/messages/send`, o);
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(same(third)).toEqual(same(again));
    // the same key with another body: refused alike over both
    const other = { ...o, body: { ...o.body, content: 'twice?' } };
    expect(same(await send(inProcess, `${base}/messages/send`, other))).toEqual(
      same(await send(nodeTransport, `${base}/messages/send`, other)),
    );
    const all = [...server.store.read.col(Messages).all()];
    const sent = all.filter((m) => m.sender_id === erin.user.id);
    expect(sent.map((m) => m.content)).toEqual(['once']);
  });

  it('the typed client over it: reads, writes, and its rate budget learns the limits', async () => {
    const gina = await user('Gina');
    const hank = await user('Hank');
    const api = createClient({ baseUrl: server.url, apiKey: gina.key, transport: inProcess });
    expect((await api.me()).id).toBe(gina.user.id);
    const sent = await api.messages.send({ recipient_pin: hank.user.pin_code, content: 'typed' });
    expect(sent.content).toBe('typed');
    expect(api.http.lastDate).toBe('Sat, 21 Nov 2026 12:00:00 GMT');
  });

  it('logs each request as HTTP does, marked in-process; the metrics count it', async () => {
    const ivy = await user('Ivy');
    const cell = metrics.httpRequests.cell('/api/v1/me', 'GET', '200');
    const before = cell.value;
    const served = server.inProcess!.served;
    const r = await send(inProcess, `${base}/me`, { key: ivy.key });
    await new Promise((resolve) => setImmediate(resolve));
    expect(cell.value).toBe(before + 1);
    expect(server.inProcess!.served).toBe(served + 1);
    const line = lines.find((l) => idOf(l) === r.requestId);
    expect(line).toMatchObject({
      msg: 'request completed',
      req: {
        method: 'GET',
        url: '/api/v1/me',
        transport: 'in-process',
        headers: { 'x-api-key': '[redacted]' },
      },
      res: { statusCode: 200 },
      user_id: ivy.user.id,
    });
    const h = await send(nodeTransport, `${base}/me`, { key: ivy.key });
    const httpLine = lines.find((l) => idOf(l) === h.requestId);
    expect((httpLine?.req as Record<string, unknown>).transport).toBeUndefined();
    // the HTTP transport declares its body's length (not chunked): the server's short way
    const body = { recipient_pin: 'x', content: 'hi' };
    const post = await send(nodeTransport, `${base}/messages/send`, { key: ivy.key, body });
    const postLine = lines.find((l) => idOf(l) === post.requestId);
    const sentHeaders = (postLine?.req as { headers: Record<string, string> }).headers;
    expect(sentHeaders['content-length']).toBe(String(JSON.stringify(body).length));
    expect(sentHeaders['transfer-encoding']).toBeUndefined();
  });

  it('refuses a URL not of its server API, and an aborted request, sending nothing', async () => {
    const served = server.inProcess!.served;
    const req = { method: 'GET', headers: {}, timeoutMs: 1000 };
    const elsewhere = 'http://example.com/api/v1/me';
    await expect(inProcess({ ...req, url: elsewhere })).rejects.toThrow(/not under/);
    await expect(inProcess({ ...req, url: `${server.url}/metrics` })).rejects.toThrow(/not under/);
    const v10 = `${server.url}/api/v10/me`;
    await expect(inProcess({ ...req, url: v10 })).rejects.toThrow(/not under/);
    const signal = AbortSignal.abort(new Error('stopped'));
    await expect(inProcess({ ...req, url: `${base}/me`, signal })).rejects.toThrow('stopped');
    expect(server.inProcess!.served).toBe(served);
  });
});

describe('embedded bots reach their server in process', () => {
  let server: RunningServer;
  let tmp: ReturnType<typeof tempDir>;
  afterAll(async () => {
    await server?.close();
    tmp?.cleanup();
  });

  it('an echo bot answers with no request over HTTP; an HTTP request is counted', async () => {
    tmp = tempDir();
    const botsDir = join(tmp.dir, 'bots');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(botsDir);
    writeFileSync(
      join(botsDir, 'echo.yaml'),
      'name: echo\nas: Echo\ncreate_user: true\nrules:\n  - on: message.received\n    do:\n' +
        '      - reply: "echo {{ event.content }}"\n',
    );
    const { lines, log } = logLines();
    const config = configFrom({
      bots: { dir: botsDir, enabled: true },
      rate_limits: { enabled: true },
    });
    const dataDir = join(tmp.dir, 'data');
    server = await startServer({ dataDir, config, host: '127.0.0.1', port: 0, log });
    let overHttp = 0;
    server.http.on('request', () => overHttp++);
    const users = () => [...server.store.read.col(Users).all()];
    const echo = await waitFor(() => users().find((u) => u.display_name === 'Echo'));
    const { key } = await server.store.transaction((tx) => {
      const u = createUser(tx, server.env, { name: 'Jo' });
      return { key: createKey(tx, server.env, u.id).api_key };
    });
    // a message before the bot runs (its wake-ups heard, its baseline set) is not its event
    await waitFor(() => lines.find((l) => l.msg.startsWith('bot echo running')));
    const servedBefore = server.inProcess!.served;
    // the person writes in process too: any HTTP request now would be the bot's
    const jo = createClient({ baseUrl: server.url, apiKey: key, transport: server.inProcess! });
    await jo.messages.send({ recipient_pin: echo.pin_code, content: 'ping' });
    const messages = () => [...server.store.read.col(Messages).all()];
    type Sent = { sender_id: string; content: string };
    const reply = (m: Sent) => m.sender_id === echo.id && m.content === 'echo ping';
    await waitFor(() => messages().find(reply));
    expect(overHttp).toBe(0);
    // the bot's poll and its reply at least, besides the person's send
    expect(server.inProcess!.served - servedBefore).toBeGreaterThanOrEqual(3);
    type Line = (typeof lines)[number];
    const inProc = (l: Line) => (l.req as { transport?: string } | undefined)?.transport;
    const botLines = lines.filter((l) => l.user_id === echo.id && inProc(l) === 'in-process');
    expect(botLines.length).toBeGreaterThan(0);
    // the counter sees an HTTP request when there is one
    await send(nodeTransport, `${server.url}/api/v1/me`, { key });
    expect(overHttp).toBe(1);
  }, 30_000);
});

/** Polls `f` every 20 ms until it gives something (at most 10 s). */
async function waitFor<T>(f: () => T | undefined): Promise<T> {
  const pause = () => new Promise((r) => setTimeout(r, 20));
  for (const end = Date.now() + 10_000; Date.now() < end; await pause()) {
    const v = f();
    if (v !== undefined) return v;
  }
  throw new Error(`timed out`);
}

describe('the in-process transport when an answer does not come whole', () => {
  const url = 'http://127.0.0.1:1/api/v1/me';
  const req = { url, method: 'GET', headers: {}, timeoutMs: 10_000 };

  it('a response cut short after its head fails as over HTTP (socket hang up)', async () => {
    const t = inProcessTransport((_req, res) => {
      res.setHeader('Content-Type', 'application/json');
      res.write('{"par');
      res.destroy();
    }, 'http://127.0.0.1:1');
    await expect(t(req)).rejects.toThrow('socket hang up');
  });

  it('no answer within the timeout rejects; the server hears the client went away', async () => {
    let closed = false;
    const t = inProcessTransport((_req, res) => {
      res.on('close', () => (closed = true));
    }, 'http://127.0.0.1:1');
    await expect(t({ ...req, timeoutMs: 20 })).rejects.toThrow('no answer within 20 ms');
    await t.idle(1000);
    expect(closed).toBe(true);
  });

  it('the body comes as a stream with its declared length; idle waits for the answer', async () => {
    let answer: (() => void) | undefined;
    const t = inProcessTransport((r, res) => {
      let body = '';
      r.setEncoding('utf8');
      r.on('data', (c: string) => (body += c));
      r.on('end', () => {
        answer = () => {
          res.statusCode = 201;
          res.end(JSON.stringify({ got: body, length: r.headers['content-length'] }));
        };
      });
    }, 'http://127.0.0.1:1');
    const pending = t({ ...req, method: 'POST', body: '{"é":1}' });
    let idle = false;
    const waiting = t.idle(5000).then(() => (idle = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(idle).toBe(false);
    answer!();
    const res = await pending;
    await waiting;
    expect(res.status).toBe(201);
    expect(JSON.parse(res.text)).toEqual({ got: '{"é":1}', length: '8' });
  });
});
