import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { meRoutes } from '../../src/api/me/routes.js';
import { walletRoutes } from '../../src/api/wallet/routes.js';
import { closeAfterAnswers, EdgeResponse } from '../../src/api/edge/response.js';
import { createHttpServer } from '../../src/http-server.js';
import { testApi, type TestApi } from '../helpers/api.js';
import { testRoutes } from '../helpers/test-routes.js';

/** What a client reads of an answer: status, the head's lines in order (as sent), the body. */
interface Answer {
  status: number;
  lines: string[];
  body: string;
}

function send(
  server: Server,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = request({ port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      res.on('end', () => {
        const lines: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
        resolve({ status: res.statusCode!, lines, body: text });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The lines with what differs between any two answers (request ids, dates, partition keys) made alike. */
function alike(a: Answer): Answer {
  const lines = a.lines.map((l) =>
    l
      .replace(/^(X-Request-Id|Date): .*/, '$1: …')
      .replace(/pk=:[^:]*:/g, 'pk=:…:')
      .replace(/"request_id":"[^"]*"/, ''),
  );
  const body = a.body
    .replace(/"request_id":"[^"]*"/, '')
    .replace(/\b(usr|note)_[0-9a-z]+/g, '$1_…')
    .replace(/"(display_name|pin_code)":"[^"]*"/g, '"$1":"…"');
  return { ...a, lines, body };
}

const listen = (s: Server) => new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));

describe('the edge’s response fields written with the head (api/edge/response.ts)', () => {
  let api: TestApi;
  /** pinbot's server (EdgeResponse: the fields kept until the head) and node's plain one (set at once). */
  let edge: Server;
  let plain: Server;
  beforeAll(async () => {
    api = await testApi({
      config: {
        rate_limits: { enabled: true, general: { limit: 4, window: '1h' }, messages: { limit: 2, window: '1h' } },
      },
      routes: [...meRoutes, ...walletRoutes, ...testRoutes],
    });
    // the same app twice (each its own rate-limit counts), with a mounted probe (listenerOf)
    edge = createHttpServer(await listenerOf(api), api.config.server);
    plain = createServer(await listenerOf(api));
    await Promise.all([listen(edge), listen(plain)]);
  });
  afterAll(async () => {
    edge.close();
    plain.close();
    await api.close();
  });

  let users = 0;
  /** Each request once to each server, as a user of its own on each side (same counts). */
  async function both(
    method: string,
    path: string,
    opts: { key?: boolean; body?: string; times?: number; headers?: Record<string, string> } = {},
  ) {
    const answers: Answer[][] = [[], []];
    for (const [i, server] of [edge, plain].entries()) {
      // names of one length: the bodies' lengths match
      const user = opts.key === false ? undefined : await api.user(`User-${String(++users).padStart(4, '0')}`);
      const headers: Record<string, string> = { ...(user?.headers ?? {}), ...opts.headers };
      if (opts.body) headers['Content-Type'] = 'application/json';
      for (let n = 0; n < (opts.times ?? 1); n++)
        answers[i]!.push(await send(server, method, path, headers, opts.body));
    }
    return answers as [Answer[], Answer[]];
  }

  it('answers every kind of request with the same head, line by line, as node’s response with setHeader', async () => {
    const cases: Array<[string, string, Parameters<typeof both>[2]]> = [
      ['GET', '/api/v1/me', {}],
      ['GET', '/api/v1/me', { key: false }], // 401, the anonymous bucket's fields, WWW-Authenticate
      ['GET', '/api/v1/me', { times: 5 }], // the fifth is 429 with Retry-After
      ['GET', '/api/v1/no-such-route', {}],
      // two buckets: two lines of each field; the third is refused by the second bucket
      ['POST', '/api/v1/test/messages', { body: '{"text":"hi"}', times: 3 }],
      // a keyed write, then its replay (Idempotent-Replayed), then the key with another body (409)
      ['POST', '/api/v1/test/messages', { body: '{"text":"hi"}', times: 2, headers: { 'Idempotency-Key': 'k-1' } }],
      ['GET', '/api/v1/test/boom', {}], // 500
      ['GET', '/healthz', { key: false }],
      ['GET', '/probe', { key: false }],
    ];
    for (const [method, path, opts] of cases) {
      const [a, b] = await both(method, path, opts);
      expect(a.map(alike), `${method} ${path}`).toEqual(b.map(alike));
      for (const x of a) expect(x.lines.some((l) => l.startsWith('X-Request-Id: '))).toBe(true);
    }
    const [[me]] = await both('GET', '/api/v1/me');
    // the test API's virtual clock: its Date is the edge's (node adds its own after the others)
    expect(me!.lines.map((l) => l.split(':')[0])).toEqual([
      'X-Request-Id',
      'Date',
      'RateLimit',
      'RateLimit-Policy',
      'Content-Type',
      'Content-Length',
      'Connection',
      'Keep-Alive',
    ]);
    const [[two]] = await both('POST', '/api/v1/test/messages', { body: '{"text":"hi"}' });
    const [[first, replayed]] = await both('POST', '/api/v1/test/messages', {
      body: '{"text":"hi"}',
      times: 2,
      headers: { 'Idempotency-Key': 'k-2' },
    });
    expect(replayed!.body).toBe(first!.body);
    expect(replayed!.lines.map((l) => l.split(':')[0])).toEqual([
      'X-Request-Id',
      'Date',
      'RateLimit',
      'RateLimit',
      'RateLimit-Policy',
      'RateLimit-Policy',
      'Idempotent-Replayed',
      'Content-Type',
      'Content-Length',
      'Connection',
      'Keep-Alive',
    ]);
    expect(two!.lines.filter((l) => l.startsWith('RateLimit: '))).toEqual([
      expect.stringMatching(/^RateLimit: "general"; r=3; t=\d+$/),
      expect.stringMatching(/^RateLimit: "messages"; r=1; t=\d+$/),
    ]);
  });

  it('a 304 carries the tag and the edge’s fields; a mounted service’s own value of a field wins', async () => {
    const [[first], [firstPlain]] = await both('GET', '/api/v1/wallet/balance');
    expect(first!.status).toBe(200);
    const tag = first!.lines.find((l) => l.startsWith('ETag: '))!.slice(6);
    const user = await api.user('Tagged');
    const one = await send(edge, 'GET', '/api/v1/wallet/balance', user.headers);
    const again = await send(edge, 'GET', '/api/v1/wallet/balance', {
      ...user.headers,
      'If-None-Match': one.lines.find((l) => l.startsWith('ETag: '))!.slice(6),
    });
    expect(again.status).toBe(304);
    expect(again.lines.map((l) => l.split(':')[0])).toEqual(
      expect.arrayContaining(['X-Request-Id', 'RateLimit', 'RateLimit-Policy', 'ETag']),
    );
    expect(tag).toBe(firstPlain!.lines.find((l) => l.startsWith('ETag: '))!.slice(6));
    const seen = await send(edge, 'GET', '/seen');
    expect(JSON.parse(seen.body)).toEqual(['X-Request-Id', 'Date', 'RateLimit', 'RateLimit-Policy']);
    const probe = await send(edge, 'GET', '/probe');
    expect(probe.lines).toContain('X-Request-Id: mine');
    expect(probe.lines.filter((l) => l.startsWith('X-Request-Id'))).toHaveLength(1);
  });

  it('a write is answered with one writeHead of the edge’s fields and its own, as a read (no setHeader)', async () => {
    const setHeader = vi.spyOn(EdgeResponse.prototype, 'setHeader');
    const flushed = vi.spyOn(EdgeResponse.prototype, 'flushEdgeHead');
    try {
      const user = await api.user('One-Head');
      const headers = { ...user.headers, 'Content-Type': 'application/json', 'Idempotency-Key': 'one-head' };
      const first = await send(edge, 'POST', '/api/v1/test/messages', headers, '{"text":"hi"}');
      const again = await send(edge, 'POST', '/api/v1/test/messages', headers, '{"text":"hi"}');
      expect([first.status, again.status]).toEqual([201, 201]);
      expect(again.lines).toContain('Idempotent-Replayed: true');
      expect(setHeader).not.toHaveBeenCalled();
      expect(flushed).not.toHaveBeenCalled();
    } finally {
      setHeader.mockRestore();
      flushed.mockRestore();
    }
  });

  it('a response made by node’s server for pinbot is an EdgeResponse; any other is answered as before', async () => {
    const seen: boolean[] = [];
    const s = createHttpServer((_req: IncomingMessage, res: ServerResponse) => {
      seen.push(res instanceof EdgeResponse);
      res.end('ok');
    }, api.config.server);
    await listen(s);
    await send(s, 'GET', '/');
    s.close();
    expect(seen).toEqual([true]);
  });
});

/** The app's listener with a mounted probe (a service that sets `X-Request-Id` itself). */
async function listenerOf(api: TestApi) {
  const { createApp } = await import('../../src/api/app.js');
  const app = createApp({
    store: api.store,
    commits: api.commits,
    env: api.env,
    log: (await import('pino')).pino({ level: 'silent' }),
    routes: [...meRoutes, ...walletRoutes, ...testRoutes],
  });
  // what the edge set is seen by a service that looks before it sets (the raw names, as sent)
  app.mount('/seen', (_req, res) =>
    res.end(JSON.stringify((res as typeof res & { getRawHeaderNames(): string[] }).getRawHeaderNames())),
  );
  app.mount('/probe', (_req, res) => {
    res.setHeader('X-Request-Id', 'mine');
    res.setHeader('X-Probe', 'yes');
    res.end('probe');
  });
  return app.listener;
}

describe('a stopping server (api/edge/response.ts closeAfterAnswers)', () => {
  /** Two pipelined GETs on one connection, held until both arrived; what the client reads. */
  async function pipelined(stop: boolean): Promise<{ text: string; closed: boolean }> {
    const held: ServerResponse[] = [];
    let arrived = () => undefined as void;
    const both = new Promise<void>((r) => (arrived = r));
    const api = await testApi();
    const s = createHttpServer((_req: IncomingMessage, res: ServerResponse) => {
      held.push(res);
      if (held.length === 2) arrived();
    }, api.config.server);
    await listen(s);
    const { port } = s.address() as AddressInfo;
    const socket = (await import('node:net')).connect(port, '127.0.0.1');
    let text = '';
    let closed = false;
    socket.setEncoding('utf8').on('data', (c: string) => (text += c));
    socket.on('close', () => (closed = true));
    socket.write('GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n');
    await both;
    if (stop) closeAfterAnswers(s);
    held[0]!.end('first');
    held[1]!.end('second');
    while (!closed && !text.includes('second')) await new Promise((r) => setTimeout(r, 5));
    socket.destroy();
    s.closeAllConnections();
    s.close();
    await api.close();
    return { text, closed };
  }

  it('tells an answer written after the stop began to close its connection (node then ends it)', async () => {
    const stopping = await pipelined(true);
    expect(stopping.text).toMatch(/^HTTP\/1\.1 200 OK\r$/m);
    expect(stopping.text.match(/^Connection: close\r$/gm)).toHaveLength(1);
    // the one pipelined behind it is not answered on a connection that said close (as before)
    expect(stopping.closed).toBe(true);
    expect(stopping.text).not.toContain('second');
    const running = await pipelined(false);
    expect(running.text.match(/^Connection: keep-alive\r$/gm)).toHaveLength(2);
    expect(running.text).toContain('second');
  });
});
