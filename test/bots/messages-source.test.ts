import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/client.js';
import { sendDirect } from '../../src/domain/messaging/send.js';
import type { User } from '../../src/domain/users/users.js';
import { allRoutes } from '../../src/api/routes.js';
import { messagesSource } from '../../src/runtime/builtins/sources/messages.js';
import type { SourceContext } from '../../src/runtime/contract/types.js';
import { testApi, type TestApi } from '../helpers/api.js';

let api: TestApi;
let server: Server;
afterEach(async () => {
  await new Promise((r) => server?.close(r));
  await api?.close();
});

/** A server on port 0 (every route, or those given), a bot user and a source context for it. */
async function world(routes?: typeof allRoutes) {
  api = await testApi({ routes });
  server = api.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const bot = await api.user('Bot');
  const client = createClient({ baseUrl: base, apiKey: bot.key });
  const requests: string[] = [];
  const counting = createClient({
    baseUrl: base,
    apiKey: bot.key,
    fetch: (input, init) => (requests.push(new URL(String(input)).pathname), fetch(input, init)),
  });
  const ctx = (baseline?: number): SourceContext => ({
    api: counting,
    me: { id: bot.user.id, display_name: 'Bot', pin_code: bot.user.pin_code },
    signal: new AbortController().signal,
    log: pino({ level: 'silent' }),
    clock: api.clock,
    baseline,
  });
  const say = (from: { user: User }, content: string) =>
    api.store.transaction((tx) => sendDirect(tx, api.env, from.user, { recipient_pin: bot.user.pin_code, content }));
  return { bot, client, ctx, say, requests };
}

type Polled = Awaited<ReturnType<typeof messagesSource.poll>>;
const contents = (p: Polled) => p.events.map((e) => (e.payload as { content: string }).content);

describe('messages source', () => {
  it('one request a poll whatever the conversations: events after the baseline, once each, not its own', async () => {
    const { bot, ctx, say, requests, client } = await world();
    const people = await Promise.all(Array.from({ length: 30 }, (_, i) => api.user(`P${i}`)));
    await say(people[0]!, 'history');
    await api.clock.advance(5);
    const baseline = api.clock.now();
    await api.clock.advance(5);
    for (const p of people) await say(p, `hi from ${p.user.id}`);
    // the bot's own message moves the cursor but is no event
    await client.messages.send({ recipient_pin: people[1]!.user.pin_code, content: 'own' });
    const first = await messagesSource.poll(ctx(baseline), undefined);
    expect(contents(first)).toEqual(people.map((p) => `hi from ${p.user.id}`));
    expect(first.events[0]!.payload).toMatchObject({
      sender: { id: people[0]!.user.id },
      conversation: {
        type: 'direct',
        participants: expect.arrayContaining([expect.objectContaining({ id: bot.user.id })]),
      },
    });
    expect(requests).toEqual(['/api/v1/messages']);
    expect(first.more).toBeUndefined();
    const again = await messagesSource.poll(ctx(), first.cursor);
    expect(again.events).toEqual([]);
    await say(people[7]!, 'later');
    const later = await messagesSource.poll(ctx(), again.cursor);
    expect(contents(later)).toEqual(['later']);
    expect(requests).toHaveLength(3);
  });

  it('reads at most five pages a poll, and says there is more', async () => {
    const { ctx, say } = await world();
    const alice = await api.user('Alice');
    const baseline = api.clock.now();
    await api.clock.advance(1);
    for (let i = 0; i < 1_050; i++) await say(alice, `m${i}`);
    const first = await messagesSource.poll(ctx(baseline), undefined);
    expect(first.events).toHaveLength(1_000);
    expect(first.more).toBe(true);
    const rest = await messagesSource.poll(ctx(), first.cursor);
    expect(contents(rest)).toEqual(Array.from({ length: 50 }, (_, i) => `m${1_000 + i}`));
    expect(rest.more).toBeUndefined();
  });

  it('moves on from per-conversation cursors (a bot of an earlier version) without repeating or missing', async () => {
    const { ctx, say } = await world();
    const [a, b] = [await api.user('A'), await api.user('B')];
    await say(a, 'a1');
    await api.clock.advance(1);
    const seenA = await say(a, 'a2');
    await api.clock.advance(1);
    await say(b, 'b1');
    await api.clock.advance(1);
    await say(a, 'a3');
    // what the per-conversation source had stored: a up to a2, b up to b1
    const bConv = (await say(b, 'b2')).conversation_id;
    const old = { since: { [seenA.conversation_id]: seenA.timestamp, [bConv]: seenA.timestamp + 1 } };
    const polled = await messagesSource.poll(ctx(), old);
    expect(contents(polled).sort()).toEqual(['a3', 'b2']);
    expect(polled.cursor).toEqual({ after: expect.any(String) });
  });

  it('a server without GET /messages (the spec): per-conversation reads, as before', async () => {
    const { ctx, say, requests } = await world(
      allRoutes.filter((r) => !(r.method === 'get' && r.path === '/messages')),
    );
    const [a, b] = [await api.user('A'), await api.user('B')];
    const baseline = api.clock.now();
    await api.clock.advance(1);
    await say(a, 'a1');
    await say(b, 'b1');
    const first = await messagesSource.poll(ctx(baseline), undefined);
    expect(contents(first).sort()).toEqual(['a1', 'b1']);
    expect(first.cursor).toEqual({ since: expect.any(Object) });
    await say(b, 'b2');
    const next = await messagesSource.poll(ctx(), first.cursor);
    expect(contents(next)).toEqual(['b2']);
    // the 404 is asked once: later polls go straight to the per-conversation reads
    expect(requests.filter((p) => p === '/api/v1/messages')).toHaveLength(1);
  });
});
