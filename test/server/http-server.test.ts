import { connect, type Socket } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, configFrom, loadConfig } from '../../src/config/load.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { tempDir } from '../helpers/api.js';
import { raw } from '../helpers/raw-http.js';

/** Status line and parsed JSON body of a raw HTTP answer. */
function parse(answer: string): {
  status: number;
  headers: string;
  body: { error: { code: string; message: string } };
} {
  const [head, body] = answer.split('\r\n\r\n');
  return { status: Number(head!.split(' ')[1]), headers: head!, body: JSON.parse(body!) };
}

describe("server limits from config.server (timeouts, connections) and node's own errors as JSON", () => {
  const tmp = tempDir('pinbot-http-');
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({
      dataDir: tmp.dir,
      config: configFrom({
        rate_limits: { enabled: false },
        server: { headers_timeout: '300ms', request_timeout: '2s', keep_alive_timeout: '1500ms', max_connections: 3 },
      }),
      port: 0,
      log: pino({ level: 'silent' }),
      services: [],
    });
  });
  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  it('sets the timeouts and the connection cap on the HTTP server', () => {
    expect(server.http.headersTimeout).toBe(300);
    expect(server.http.requestTimeout).toBe(2000);
    expect(server.http.keepAliveTimeout).toBe(1500);
    expect(server.http.maxConnections).toBe(3);
  });

  it('defaults are finite and documented', () => {
    const s = configFrom({}).server;
    expect(s).toMatchObject({
      headers_timeout: '15s',
      request_timeout: '30s',
      keep_alive_timeout: '5s',
      max_connections: 1000,
      trust_proxy: false,
    });
  });

  it('a malformed request line is 400 malformed_request with the JSON error body', async () => {
    const res = parse(await raw(server.port, 'BLAH /\u0001 HTTP/9\r\n\r\n'));
    expect(res.status).toBe(400);
    expect(res.headers).toMatch(/content-type: application\/json; charset=utf-8/i);
    expect(res.headers).toMatch(/x-request-id: [0-9a-f-]{36}/i);
    expect(res.body.error.code).toBe('malformed_request');
  });

  it('headers over 16 kB are 431 headers_too_large with the JSON error body', async () => {
    const res = parse(
      await raw(server.port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17_000)}\r\n\r\n`),
    );
    expect(res.status).toBe(431);
    expect(res.body.error.code).toBe('headers_too_large');
  });

  it('a client that never finishes its headers gets 408 request_timeout and is disconnected', async () => {
    const res = parse(await raw(server.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n'));
    expect(res.status).toBe(408);
    expect(res.body.error.code).toBe('request_timeout');
  });

  it('connections past max_connections are closed on arrival; the others are served', async () => {
    const held: Socket[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const s = connect(server.port, '127.0.0.1');
        await new Promise((resolve) => s.once('connect', resolve));
        held.push(s);
      }
      // The fourth connection is accepted by the kernel, then closed by node without an answer.
      expect(await raw(server.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n').catch(() => '')).toBe('');
      // A held connection still works.
      const answer = new Promise<string>((resolve) => held[0]!.once('data', (c) => resolve(String(c))));
      held[0]!.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(await answer).toMatch(/^HTTP\/1.1 200/);
    } finally {
      for (const s of held) s.destroy();
    }
  });
});

describe('config.server timeouts', () => {
  it('a headers_timeout longer than request_timeout stops start-up at its line', () => {
    const t = tempDir('pinbot-http-cfg-');
    try {
      const f = join(t.dir, 'config.yaml');
      writeFileSync(f, 'server:\n  headers_timeout: 1m\n  request_timeout: 30s\n');
      expect(() => loadConfig(f)).toThrow(ConfigError);
      expect(() => loadConfig(f)).toThrow(
        `${f}:2:20: server.headers_timeout: is longer than server.request_timeout (30s)`,
      );
      expect(() => configFrom({ server: { headers_timeout: '1m' } })).toThrow(/headers_timeout/);
    } finally {
      t.cleanup();
    }
  });
});
