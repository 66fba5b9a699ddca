import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestWorld, type TestWorld } from 'pinbot/testing';
import webhook, { verify } from './webhook.js';

const SECRET = 'test-secret-0123456789';

interface Delivery {
  headers: IncomingMessage['headers'];
  body: string;
  status: number;
}

/** A local HTTP receiver answering each request with the next of `answers` (then 200); 'hang' never answers. */
async function receiver(
  answers: Array<number | 'hang'> = [],
): Promise<{ url: string; got: Delivery[]; close(): Promise<void>; server: Server }> {
  const got: Delivery[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const a = answers.shift() ?? 200;
      got.push({ headers: req.headers, body, status: a === 'hang' ? 0 : a });
      if (a !== 'hang') res.writeHead(a).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    got,
    server,
    close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

const forwarder = (url: string) =>
  `name: fwd\nas: fwd\nrules:\n  - on: [message.received, transfer.received]\n    ` +
  `do:\n      - webhook.post: { url: "${url}" }\n`;

let world: TestWorld | undefined;
let rx: Awaited<ReturnType<typeof receiver>> | undefined;
afterEach(async () => {
  await world?.close();
  await rx?.close();
  world = rx = undefined;
});

const start = (config: Record<string, unknown> = {}) =>
  createTestWorld({
    users: { alice: { balance: 10 }, fwd: {} },
    config: {
      rate_limits: { enabled: false },
      plugins: { config: { webhook: { secret: SECRET, backoff_ms: 1000, ...config } } },
    },
    plugins: [webhook],
    bots: [forwarder(rx!.url)],
  });

describe('webhook', () => {
  it('forwards the chosen events as signed JSON with an idempotency key', async () => {
    rx = await receiver();
    world = await start();
    await world.as('alice').send('fwd', 'hello');
    await world.as('alice').pay('fwd', 2);
    await world.advance('5s');
    expect(rx.got.map((d) => d.headers['x-pinbot-event']).sort()).toEqual(['message.received', 'transfer.received']);
    for (const d of rx.got) {
      // signed with the time of the attempt and its Idempotency-Key: what webhook_in checks
      expect(d.headers['x-pinbot-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(
        verify(
          SECRET,
          Buffer.from(d.body),
          d.headers['idempotency-key'] as string,
          d.headers['x-pinbot-signature'] as string,
          world.clock.now(),
          300,
        ),
      ).toMatchObject({ ok: true });
      expect(
        verify(
          SECRET,
          Buffer.from(d.body),
          'another-key',
          d.headers['x-pinbot-signature'] as string,
          world.clock.now(),
          300,
        ),
      ).toMatchObject({ ok: false, code: 'bad_signature' });
      expect(d.headers['idempotency-key']).toMatch(/^pinbot:fwd:rule-1:/);
      expect(d.headers['content-type']).toBe('application/json');
    }
    expect(JSON.parse(rx.got.find((d) => d.headers['x-pinbot-event'] === 'message.received')!.body)).toMatchObject({
      type: 'message.received',
      content: 'hello',
    });
  });

  it('a receiver that fails twice then succeeds gets the event exactly once, after backoff on the clock', async () => {
    rx = await receiver([503, 500]);
    world = await start();
    await world.as('alice').send('fwd', 'hello');
    // the bot is woken by the message at once: attempt 1 fails, the retry waits 1 s of virtual
    // time
    await world.settle();
    expect(rx.got.map((d) => d.status)).toEqual([503]);
    await world.advance('1s'); // attempt 2 fails: the next waits 2 s
    expect(rx.got.map((d) => d.status)).toEqual([503, 500]);
    await world.advance('2s');
    expect(rx.got.map((d) => d.status)).toEqual([503, 500, 200]);
    expect(new Set(rx.got.map((d) => d.headers['idempotency-key'])).size).toBe(1);
    expect(rx.got.map((d) => d.headers['x-pinbot-attempt'])).toEqual(['1', '2', '3']);
    expect(world.traces('fwd')[0]).toMatchObject({
      outcome: 'done',
      steps: [{ status: 'done', result: { status: 200, attempts: 3 } }],
    });
    await world.advance('1h');
    expect(rx.got.filter((d) => d.status === 200)).toHaveLength(1);
  });

  it('an attempt that does not answer in time is retried; a 4xx is not', async () => {
    rx = await receiver(['hang', 200]);
    world = await start({ timeout_ms: 200 });
    await world.as('alice').send('fwd', 'slow');
    await world.advance('10s');
    expect(rx.got.map((d) => d.status)).toEqual([0, 200]);
    expect(world.traces('fwd')[0]).toMatchObject({ outcome: 'done', steps: [{ result: { attempts: 2 } }] });
    rx.got.length = 0;
    await rx.close();
    rx = await receiver([422]);
    await world.close();
    world = await start();
    await world.as('alice').send('fwd', 'refused');
    await world.advance('10s');
    expect(rx.got.map((d) => d.status)).toEqual([422]);
    expect(world.traces('fwd')[0]).toMatchObject({
      outcome: 'failed',
      reason: 'plugin_failed',
      message: expect.stringContaining('answered 422; not retried'),
    });
  });
});
