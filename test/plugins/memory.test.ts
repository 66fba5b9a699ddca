import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin } from 'pinbot/plugin';
import { createTestWorld, type TestWorld } from 'pinbot/testing';

/** A plugin that counts a person's visits in the bot's memory, and notes the conversation's last visitor. */
const visits = definePlugin({
  name: 'visits',
  version: '1.0.0',
  pinbot: '*',
  actions: {
    count: {
      schema: { type: 'object', properties: {} },
      run: async (ctx) => {
        const n = ((await ctx.memory.get<number>('visits')) ?? 0) + 1;
        await ctx.memory.set('visits', n);
        if (ctx.conversationMemory.subject) await ctx.conversationMemory.set('last_visitor', ctx.memory.subject!);
        await ctx.reply(`visit ${n}`);
        return { visits: n };
      },
    },
    fill: {
      schema: { type: 'object', properties: {} },
      run: async (ctx) => {
        for (const k of ['a', 'b', 'c']) await ctx.memory.set(k, 1);
        return {};
      },
    },
    nobody: {
      schema: { type: 'object', properties: {} },
      run: async (ctx) => ctx.memory.get('visits'),
    },
  },
});

/** The plugin writes, the YAML reads (memory.visits): one memory. */
const BOT = `name: door
as: door
memory: { max_keys_per_person: 2 }
rules:
  - id: visit
    on: message.received
    if: { content: "hi" }
    do:
      - visits.count: {}
  - id: show
    on: message.received
    if: { content: "show" }
    do:
      - reply: "you came {{ memory.visits | default: 0 }} times; last here {{ conversation_memory.last_visitor }}"
  - id: fill
    on: message.received
    if: { content: "fill" }
    do:
      - visits.fill: {}
  - id: nightly
    on: { schedule: "0 3 * * *" }
    do:
      - visits.nobody: {}
`;

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('ctx.memory', () => {
  it(
    "a plugin reads and writes the memory of the event's person, shared with the YAML " +
      'rules; the test kit reads and seeds it',
    async () => {
      world = await createTestWorld({
        users: { alice: {}, bob: {}, door: {} },
        config: { rate_limits: { enabled: false } },
        plugins: [visits],
        bots: [BOT],
      });
      await world.remember('door', 'bob', { visits: 41 });
      await world.as('alice').send('door', 'hi');
      await world.as('bob').send('door', 'hi');
      await world.as('alice').send('door', 'hi');
      await world.advance('5s');
      await world.as('alice').send('door', 'show');
      await world.advance('5s');
      expect((await world.inbox('alice')).map((m) => m.content)).toEqual([
        'visit 1',
        'visit 2',
        `you came 2 times; last here ${world.users.alice!.pin_code}`,
      ]);
      expect((await world.inbox('bob')).map((m) => m.content)).toEqual(['visit 42']);
      expect(await world.memory('door', 'alice')).toEqual({ visits: 2 });
      expect(await world.memory('door', world.users.bob!.pin_code)).toEqual({ visits: 42 });
      const [conv] = (await world.users.alice!.api.conversations.list()).conversations;
      expect(await world.memory('door', { conversation: conv!.id })).toEqual({
        last_visitor: world.users.alice!.pin_code,
      });
      // it survives a restart of the server and its bots
      await world.restart();
      expect(await world.memory('door', 'alice')).toEqual({ visits: 2 });
    },
  );

  it(
    "past the bot's bound: the write is refused (reason limit, the plugin not blamed), " +
      'what was written before stays',
    async () => {
      world = await createTestWorld({
        users: { alice: {}, door: {} },
        config: { rate_limits: { enabled: false } },
        plugins: [visits],
        bots: [BOT],
      });
      await world.as('alice').send('door', 'fill');
      await world.advance('5s');
      const t = world.traces('door').find((x) => x.rule === 'fill')!;
      expect(t).toMatchObject({ outcome: 'failed', reason: 'limit' });
      expect(t.message).toMatch(/would have 3 keys, at most 2 \(memory\.max_keys_per_person\); nothing was written/);
      expect(await world.memory('door', 'alice')).toEqual({ a: 1, b: 1 });
      expect(world.plugins().find((p) => p.name === 'visits')).toMatchObject({ status: 'running' });
    },
  );

  it('an event about no person: ctx.memory says so', async () => {
    world = await createTestWorld({
      start: '2026-01-01T02:59:00Z',
      users: { door: {} },
      config: { rate_limits: { enabled: false } },
      plugins: [visits],
      bots: [BOT],
    });
    await world.advance('2m');
    const t = world.traces('door').find((x) => x.rule === 'nightly')!;
    expect(t).toMatchObject({ outcome: 'failed' });
    expect(t.message).toMatch(
      /plugin visits: schedule events are about no person, so ctx\.memory has nothing to read or write/,
    );
  });
});
