import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestWorld, type TestWorld } from 'pinbot/testing';
import webhookIn from './webhook_in.js';

const SECRET = 'inbound-secret-0123456789';
const sign = (body: string, secret = SECRET) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function start(): Promise<TestWorld> {
  const w = await createTestWorld({ users: { alice: {}, hooks: {} }, config: { plugins: { config: { webhook_in: { secret: SECRET } } } }, plugins: [webhookIn] });
  await w.addBot(`name: hooks\nas: hooks\nrules:\n  - on: webhook_in.received\n    do:\n      - send_message: { to: "${w.users.alice!.pin_code}", content: "hook: {{ event.body.title }}" }\n`);
  return w;
}

const post = (w: TestWorld, bot: string, body: string, headers: Record<string, string> = {}) => w.fetch(`/plugins/webhook_in/${bot}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });

describe('webhook_in', () => {
  it('a signed POST becomes an event of that bot, through its inbox, traced', async () => {
    world = await start();
    const body = JSON.stringify({ title: 'deploy done' });
    const r = await post(world, 'hooks', body, { 'X-Pinbot-Signature': sign(body) });
    expect(r.status).toBe(202);
    expect(await r.json()).toMatchObject({ queued: true });
    await world.settle();
    expect((await world.inbox('alice')).map((m) => m.content)).toEqual(['hook: deploy done']);
    expect(world.traces('hooks')).toMatchObject([{ outcome: 'done', event: { type: 'webhook_in.received' } }]);
  });

  it('a bad or missing signature is a 401 and nothing is emitted', async () => {
    world = await start();
    const body = JSON.stringify({ title: 'forged' });
    expect((await post(world, 'hooks', body, { 'X-Pinbot-Signature': sign(body, 'another-secret-0123456789') })).status).toBe(401);
    expect((await post(world, 'hooks', body, { 'X-Pinbot-Signature': sign('{"title":"other"}') })).status).toBe(401);
    const unsigned = await post(world, 'hooks', body);
    expect(unsigned.status).toBe(401);
    expect(await unsigned.json()).toMatchObject({ error: { code: 'bad_signature' } });
    await world.advance('1m');
    expect(world.traces('hooks')).toEqual([]);
    expect(await world.inbox('alice')).toEqual([]);
  });

  it('a redelivery (same Idempotency-Key) is dropped; an unknown bot is 404; a body that is not JSON is 400', async () => {
    world = await start();
    const body = JSON.stringify({ title: 'once' });
    const headers = { 'X-Pinbot-Signature': sign(body), 'Idempotency-Key': 'delivery-1' };
    expect((await post(world, 'hooks', body, headers)).status).toBe(202);
    await world.settle();
    const again = await post(world, 'hooks', body, headers);
    expect([again.status, await again.json()]).toEqual([200, { queued: false, duplicate: true, key: 'delivery-1' }]);
    await world.settle();
    expect((await world.inbox('alice')).map((m) => m.content)).toEqual(['hook: once']);
    expect((await post(world, 'nobody', body, headers)).status).toBe(404);
    expect((await post(world, 'hooks', 'not json', { 'X-Pinbot-Signature': sign('not json') })).status).toBe(400);
    expect((await world.fetch('/plugins/webhook_in/hooks')).status).toBe(405);
  });
});
