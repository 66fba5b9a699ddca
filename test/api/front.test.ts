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
    const { listener, classes } = createApp({ store: api.store, commits: api.commits, env: api.env, log: pino({ level: 'silent' }) });
    const server = createHttpServer(listener, api.config.server, classes);
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
    const res = await rawRequest(port, `GET http://127.0.0.1:${port}/api/v1/me?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${alice.key}\r\nConnection: close\r\n\r\n`);
    expect(res).toMatch(/^HTTP\/1\.1 400 /); // the query names no field /me takes: the route itself answered
    expect(res).toContain('"query.x"');
    const ok = await rawRequest(port, `GET http://127.0.0.1:${port}/api/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${alice.key}\r\nConnection: close\r\n\r\n`);
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
