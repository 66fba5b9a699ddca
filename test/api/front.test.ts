import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../../src/http-server.js';
import { testApi, type TestApi } from '../helpers/api.js';
import { createApp } from '../../src/api/app.js';

/** Sends `raw` on a new connection and returns everything the server answered. */
function rawRequest(port: number, raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const s = connect(port, '127.0.0.1', () => s.write(raw));
    s.on('data', (d) => (out += d.toString()));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
}

describe('the front of every request (api/app.ts)', () => {
  let api: TestApi;
  let port: number;
  let close: () => Promise<void>;
  beforeAll(async () => {
    api = await testApi();
    const { listener } = createApp({
      store: api.store,
      commits: api.commits,
      env: api.env,
      log: pino({ level: 'silent' }),
    });
    const server = createHttpServer(listener, api.config.server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
    close = () => new Promise((r) => server.close(() => r()));
  });
  afterAll(async () => {
    await close();
    await api.close();
  });

  it('a request target in absolute form is routed as its path (HTTP/1.1 servers must take it)', async () => {
    const alice = await api.user('Alice');
    const res = await rawRequest(
      port,
      `GET http://127.0.0.1:${port}/api/v1/me?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${
        alice.key
      }\r\nConnection: close\r\n\r\n`,
    );
    expect(res).toMatch(/^HTTP\/1\.1 400 /); // the query names no field /me takes: the route itself answered
    expect(res).toContain('"query.x"');
    const ok = await rawRequest(
      port,
      `GET http://127.0.0.1:${port}/api/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${
        alice.key
      }\r\nConnection: close\r\n\r\n`,
    );
    expect(ok).toMatch(/^HTTP\/1\.1 200 /);
    expect(ok).toContain(`"id":"${alice.user.id}"`);
  });

  it('the Date header is the server’s clock, virtual too, and moves with it', async () => {
    const res = await rawRequest(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(res).toContain('Date: Sat, 21 Nov 2026 12:00:00 GMT');
    await api.clock.advance(61_000);
    const later = await rawRequest(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(later).toContain('Date: Sat, 21 Nov 2026 12:01:01 GMT');
  });
});

describe('a malformed absolute-form target (round 4)', () => {
  let api: TestApi;
  let port: number;
  let close: () => Promise<void>;
  const lines: Array<Record<string, unknown>> = [];
  beforeAll(async () => {
    api = await testApi({ config: { rate_limits: { enabled: true } } });
    const log = pino(
      { level: 'info' },
      { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) },
    );
    const { listener } = createApp({ store: api.store, commits: api.commits, env: api.env, log });
    const server = createHttpServer(listener, api.config.server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
    close = () => new Promise((r) => server.close(() => r()));
  });
  afterAll(async () => {
    await close();
    await api.close();
  });

  it('is 400 malformed_request through the normal edge: a request id, a log line, the anonymous limit', async () => {
    const res = await rawRequest(
      port,
      `GET http://[::1/api/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
    );
    expect(res).toMatch(/^HTTP\/1\.1 400 /);
    expect(res).toContain('"code":"malformed_request"');
    const id = /X-Request-Id: (\S+)/i.exec(res)?.[1];
    expect(id).toBeDefined();
    const line = lines.find((l) => (l.req as { id?: string } | undefined)?.id === id);
    expect(line).toMatchObject({ req: { url: 'http://[::1/api/v1/me' }, res: { statusCode: 400 } });
    expect(lines.some((l) => l.level === 50)).toBe(false);
    // the anonymous limit counts them: the 30 of the minute, then 429
    const limit = api.config.rate_limits.anonymous.limit;
    const answers: string[] = [];
    for (let i = 1; i < limit + 1; i++)
      answers.push(
        (
          await rawRequest(port, `GET http://[::1/x${i} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`)
        ).slice(0, 12),
      );
    expect(answers.slice(0, limit - 1).every((a) => a === 'HTTP/1.1 400')).toBe(true);
    expect(answers[limit - 1]).toBe('HTTP/1.1 429');
  });
});
