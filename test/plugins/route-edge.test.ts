import { request } from 'node:http';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestWorld, type TestWorld } from 'pinbot/testing';

/**
 * Plugin HTTP routes are reached without a key, by anyone: they sit behind the API's edge
 * (request id, log line, the anonymous rate limit, a body limit answered 413), what fails in
 * them is told to the caller as a generic error with the request id (the detail goes to the
 * log), and their failures never quarantine the plugin (issue 21, items 1, 7 and 8).
 */

const GATE = 'test/plugins/fixtures/gate.ts';
const BOT = 'name: pinger\nas: pinger\nrules:\n  - on: message.received\n    do:\n      - gate.ping: {}\n';

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** A world with the gate plugin whose log lines are kept in `lines`. */
async function start(config: Record<string, unknown> = {}) {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  world = await createTestWorld({
    users: { alice: {}, pinger: {} },
    plugins: [GATE],
    bots: [BOT],
    config,
    log: pino({ level: 'info' }, sink),
  });
  return { w: world, lines };
}

const lookup = (w: TestWorld, who: string) => w.fetch(`/plugins/gate/lookup/${who}`, { method: 'POST' });

describe('plugin routes', () => {
  it(
    'failures caused by outside input never quarantine the plugin: 20 failing requests, ' +
      'and its routes and actions still work (item 1)',
    async () => {
      const { w } = await start();
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) statuses.push((await lookup(w, `nobody${i}`)).status);
      expect(statuses).toEqual(Array(20).fill(500)); // on main: 500 × 5, then 503 (quarantined until restart)
      expect(w.plugins()[0]).toMatchObject({ name: 'gate', status: 'running', failures: 20 });
      expect((await lookup(w, 'alice')).status).toBe(200);
      await w.as('alice').send('pinger', 'hi');
      await w.advance('5s');
      expect(w.traces('pinger')).toMatchObject([{ outcome: 'done', steps: [{ result: { pong: true } }] }]);
    },
  );

  it(
    'a failing route answers a generic plugin_failed with the request id; the error and ' +
      'file:line go to the log under that id (item 8)',
    async () => {
      const { w, lines } = await start();
      const r = await lookup(w, 'mallory');
      const id = r.headers.get('x-request-id');
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const text = await r.text();
      expect([r.status, JSON.parse(text)]).toEqual([
        500,
        {
          error: {
            code: 'plugin_failed',
            message: 'Plugin gate could not handle the request. The server log has the detail under this request id.',
            request_id: id,
          },
        },
      ]);
      expect(text).not.toMatch(/hunter2|fixtures|gate\.ts|no row/); // on main: the error and plugins' file:line:col
      const detail = lines.find((l) => l.reqId === id && String(l.msg).includes('hunter2'));
      expect(detail).toMatchObject({
        plugin: 'gate',
        status: 500,
        frame: expect.stringMatching(/^test\/plugins\/fixtures\/gate\.ts:\d+:\d+$/),
      });
      // and the request's own line, as for the API
      await w.settle();
      expect(lines.find((l) => l.msg === 'request completed' && (l.req as { id?: string })?.id === id)).toMatchObject({
        res: { statusCode: 500 },
        req: { method: 'POST', url: '/plugins/gate/lookup/mallory' },
      });
    },
  );

  it(
    'requests without a key that fail count against the anonymous limit: 429 after the ' +
      'same 30 as /api/v1; answers under 400 are given back (item 7)',
    async () => {
      const { w } = await start();
      // a sender whose requests work is never limited
      for (let i = 0; i < 40; i++) expect((await w.fetch('/plugins/gate/ok')).status).toBe(200);
      const statuses: number[] = [];
      for (let i = 0; i < 35; i++) statuses.push((await lookup(w, `guess${i}`)).status);
      expect(statuses).toEqual([...Array(30).fill(500), ...Array(5).fill(429)]); // on main: 500 × 35
      const limited = await lookup(w, 'guess');
      expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await limited.json()).toMatchObject({ error: { code: 'rate_limited' } });
      // one budget per address, shared with the API's requests without a key
      expect((await w.fetch('/api/v1/me')).status).toBe(429);
      await w.advance('1m');
      expect((await lookup(w, 'alice')).status).toBe(200);
    },
  );

  it(
    'a body over the limit (1 MiB) is answered 413 — before it is read when its length ' +
      'is declared, and without a reset when it is not (item 7)',
    async () => {
      const { w } = await start({ server: { headers_timeout: '2s', request_timeout: '5s' } });
      const size = (body: BodyInit) =>
        w.fetch('/plugins/gate/size', { method: 'POST', body, duplex: 'half' } as RequestInit);
      const big = await size('x'.repeat(2 * 1024 * 1024)); // on main: the connection reset (ECONNRESET)
      expect([big.status, (await big.json()).error]).toEqual([
        413,
        {
          code: 'payload_too_large',
          message: 'a plugin route takes a body of at most 1048576 bytes (plugins.max_body_bytes)',
        },
      ]);
      // chunked, no length: refused once it passes the limit, the rest drained
      const chunks = new ReadableStream({
        start(c) {
          for (let i = 0; i < 32; i++) c.enqueue(new Uint8Array(64 * 1024).fill(121));
          c.close();
        },
      });
      const streamed = await size(chunks);
      expect([streamed.status, (await streamed.json()).error.code]).toEqual([413, 'payload_too_large']);
      // 10 MB announced and 10 bytes sent: the 413 comes without waiting for the rest
      const early = await new Promise<number>((resolve, reject) => {
        const url = new URL(`${w.url}/plugins/gate/size`);
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            headers: { 'Content-Length': String(10_000_000) },
          },
          (res) => {
            resolve(res.statusCode!);
            res.resume();
            req.destroy();
          },
        );
        req.on('error', reject);
        req.write('z'.repeat(10));
      });
      expect(early).toBe(413); // on main: nothing until request_timeout (408)
      expect((await size('x'.repeat(1_048_576))).status).toBe(200);
    },
  );

  it('plugins.max_body_bytes sets the limit', async () => {
    const { w } = await start({ plugins: { max_body_bytes: 1024 } });
    const size = (body: string) => w.fetch('/plugins/gate/size', { method: 'POST', body });
    const fits = await size('x'.repeat(1024));
    expect([fits.status, await fits.json()]).toEqual([200, { bytes: 1024 }]);
    expect((await size('x'.repeat(1025))).status).toBe(413);
  });
});
