import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestWorld, type TestWorld } from 'pinbot/testing';
import { sign } from './lib/webhook-signature.js';
import webhook from './webhook.js';
import webhookIn from './webhook_in.js';

const SECRET = 'inbound-secret-0123456789';

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function start(settings: Record<string, unknown> = { secret: SECRET }): Promise<TestWorld> {
  const w = await createTestWorld({
    users: { alice: {}, hooks: {} },
    config: { plugins: { config: { webhook_in: settings } } },
    plugins: [webhookIn],
  });
  await w.addBot(
    `name: hooks\nas: hooks\nrules:\n  - on: webhook_in.received\n    do:\n      - ` +
      `send_message: { to: "${w.users.alice!.pin_code}", content: "hook: {{ ` +
      `event.body.title }}" }\n`,
  );
  return w;
}

const post = (w: TestWorld, bot: string, body: string, headers: Record<string, string> = {}) =>
  w.fetch(`/plugins/webhook_in/${bot}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body,
  });
/** The headers of a delivery signed now on the world's clock. */
const signed = (w: TestWorld, body: string, key?: string, secret = SECRET) => ({
  'X-Pinbot-Signature': sign(secret, body, w.clock.now(), key),
  ...(key ? { 'Idempotency-Key': key } : {}),
});

describe('webhook_in', () => {
  it('a signed POST becomes an event of that bot, through its inbox, traced', async () => {
    world = await start();
    const body = JSON.stringify({ title: 'deploy done' });
    const r = await post(world, 'hooks', body, signed(world, body));
    expect(r.status).toBe(202);
    expect(await r.json()).toMatchObject({ queued: true });
    await world.settle();
    expect((await world.inbox('alice')).map((m) => m.content)).toEqual(['hook: deploy done']);
    expect(world.traces('hooks')).toMatchObject([{ outcome: 'done', event: { type: 'webhook_in.received' } }]);
  });

  it('a bad, missing or old-style signature is a 401 and nothing is emitted', async () => {
    world = await start();
    const body = JSON.stringify({ title: 'forged' });
    expect((await post(world, 'hooks', body, signed(world, body, undefined, 'another-secret-0123456789'))).status).toBe(
      401,
    );
    expect((await post(world, 'hooks', body, signed(world, '{"title":"other"}'))).status).toBe(401);
    // the body-only signature of version 1 could be replayed: it is refused
    expect(
      (
        await post(world, 'hooks', body, {
          'X-Pinbot-Signature': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
        })
      ).status,
    ).toBe(401);
    const unsigned = await post(world, 'hooks', body);
    expect(unsigned.status).toBe(401);
    expect(await unsigned.json()).toMatchObject({
      error: { code: 'bad_signature', message: expect.stringContaining('t=<Unix seconds>,v1=') },
    });
    await world.advance('1m');
    expect(world.traces('hooks')).toEqual([]);
    expect(await world.inbox('alice')).toEqual([]);
  });

  it(
    'a redelivery (same Idempotency-Key) is dropped; an unknown bot is 404; a body that ' + 'is not JSON is 400',
    async () => {
      world = await start();
      const body = JSON.stringify({ title: 'once' });
      expect((await post(world, 'hooks', body, signed(world, body, 'delivery-1'))).status).toBe(202);
      await world.advance('1s');
      // signed again (a retry of the sender): the key makes it the same delivery
      const again = await post(world, 'hooks', body, signed(world, body, 'delivery-1'));
      expect([again.status, await again.json()]).toEqual([200, { queued: false, duplicate: true, key: 'delivery-1' }]);
      await world.settle();
      expect((await world.inbox('alice')).map((m) => m.content)).toEqual(['hook: once']);
      expect((await post(world, 'nobody', body, signed(world, body, 'delivery-2'))).status).toBe(404);
      expect((await post(world, 'hooks', 'not json', signed(world, 'not json'))).status).toBe(400);
      expect((await world.fetch('/plugins/webhook_in/hooks')).status).toBe(405);
    },
  );

  it(
    'a captured request replayed with a new Idempotency-Key, as is, or after the window ' +
      'is refused (issue 21, item 3)',
    async () => {
      world = await start();
      const body = JSON.stringify({ title: 'pay the invoice' });
      const captured = signed(world, body, 'delivery-1');
      expect((await post(world, 'hooks', body, captured)).status).toBe(202);
      const answers: number[] = [];
      for (let i = 2; i <= 6; i++)
        answers.push((await post(world, 'hooks', body, { ...captured, 'Idempotency-Key': `delivery-${i}` })).status);
      expect(answers).toEqual([401, 401, 401, 401, 401]); // on version 1: 202 × 5, five more events
      // the same signature again within the window: taken once (even with the header reordered)
      const [t, v1] = captured['X-Pinbot-Signature'].split(',');
      const same = await post(world, 'hooks', body, { ...captured, 'X-Pinbot-Signature': `${v1}, ${t}` });
      expect([same.status, (await same.json()).queued]).toEqual([200, false]);
      await world.advance('5m1s');
      const late = await post(world, 'hooks', body, captured);
      expect([late.status, (await late.json()).error.code]).toEqual([401, 'stale_signature']);
      // a time in the future past the window is refused too
      const ahead = {
        'X-Pinbot-Signature': sign(SECRET, body, world.clock.now() + 301_000, 'delivery-9'),
        'Idempotency-Key': 'delivery-9',
      };
      expect((await post(world, 'hooks', body, ahead)).status).toBe(401);
      await world.settle();
      expect((await world.inbox('alice')).map((m) => m.content)).toEqual(['hook: pay the invoice']);
    },
  );

  it(
    'the replay memory is bounded: past max_remembered within the window, deliveries ' +
      'wait (429), and room comes back with time',
    async () => {
      world = await start({ secret: SECRET, max_remembered: 2, tolerance_s: 60 });
      const send = (title: string) => {
        const body = JSON.stringify({ title });
        return post(world!, 'hooks', body, signed(world!, body, title));
      };
      expect([(await send('a')).status, (await send('b')).status]).toEqual([202, 202]);
      const full = await send('c');
      expect([full.status, full.headers.get('retry-after'), (await full.json()).error.code]).toEqual([
        429,
        '120',
        'too_many_deliveries',
      ]);
      await world.advance('2m');
      expect((await send('c')).status).toBe(202);
    },
  );

  it(
    'a bot name that is a member of every object (constructor, __proto__, …) is refused ' +
      'like any other, and the plugin keeps running (issue 21, item 1)',
    async () => {
      world = await start({ secrets: { hooks: SECRET } });
      const body = JSON.stringify({ title: 'x' });
      const statuses: number[] = [];
      // URL-encoded forms and the rest of Object.prototype too (review of issue 21)
      for (const name of [
        'constructor',
        '__proto__',
        'toString',
        'valueOf',
        'hasOwnProperty',
        '%5F%5Fproto%5F%5F',
        'con%73tructor',
        '__defineGetter__',
        'propertyIsEnumerable',
        'isPrototypeOf',
        'prototype',
      ]) {
        for (let i = 0; i < 2; i++) statuses.push((await post(world, name, body, signed(world, body))).status);
      }
      expect(new Set(statuses)).toEqual(new Set([401])); // on main: 500 each, and quarantined after the 5th
      expect(world.plugins().find((p) => p.name === 'webhook_in')).toMatchObject({ status: 'running' });
      const ok = JSON.stringify({ title: 'still here' });
      expect((await post(world, 'hooks', ok, signed(world, ok, 'k1'))).status).toBe(202);
    },
  );

  it('what the webhook plugin sends, webhook_in accepts: the two sign and check the same way', async () => {
    world = await createTestWorld({
      users: { alice: {}, hooks: {}, fwd: {} },
      config: {
        rate_limits: { enabled: false },
        plugins: { config: { webhook_in: { secret: SECRET }, webhook: { secret: SECRET } } },
      },
      plugins: [webhookIn, webhook],
    });
    await world.addBot(
      `name: hooks\nas: hooks\nrules:\n  - on: webhook_in.received\n    do:\n      - ` +
        `send_message: { to: "${world.users.alice!.pin_code}", content: "relayed: {{ ` +
        `event.body.content }}" }\n`,
    );
    await world.addBot(
      `name: fwd\nas: fwd\nrules:\n  - on: message.received\n    do:\n      - ` +
        `webhook.post: { url: "${world.url}/plugins/webhook_in/hooks" }\n`,
    );
    await world.as('alice').send('fwd', 'hello');
    await world.advance('5s');
    expect(world.traces('fwd')).toMatchObject([{ outcome: 'done', steps: [{ result: { status: 202 } }] }]);
    expect((await world.inbox('alice')).map((m) => m.content)).toEqual(['relayed: hello']);
  });
});
