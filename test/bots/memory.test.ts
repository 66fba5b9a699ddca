import { afterEach, describe, expect, it } from 'vitest';
import { BotMemory } from '../../src/runtime/state/memory.js';
import { formatTrace } from '../../src/runtime/state/trace-format.js';
import { botWorld, type BotWorld } from '../helpers/bots.js';

let w: BotWorld;
afterEach(() => w?.close());

const usual = (extra = '') => `name: pizza
as: Pizza
create_user: true
${extra}rules:
  - id: order
    on: message.received
    if: { content: { matches: "^order (?<size>small|medium|large)$" } }
    do:
      - remember: { usual: "{{ match.size }}", orders: "{{ memory.orders | default: 0 | plus: 1 }}" }
      - reply: "{{ memory.usual }} it is (order {{ memory.orders }})"
  - id: usual
    on: message.received
    if: { content: "usual" }
    do:
      - reply: "Your usual: {{ memory.usual | default: 'none yet' }}"
  - id: forget
    on: message.received
    if: { content: "forget me" }
    do:
      - forget: all
      - reply: "Forgotten{{ memory.usual }}"
  - id: topic
    on: message.received
    if: { content: { matches: "^topic (?<t>\\\\w+)$" } }
    do:
      - remember: { in: conversation, topic: "{{ match.t }}" }
      - reply: "topic {{ conversation_memory.topic }}"
`;

/** The texts of a person's conversation with the bot, in order. */
async function said(api: Awaited<ReturnType<BotWorld['user']>>['api']): Promise<string[]> {
  const [conv] = (await api.conversations.list()).conversations;
  return (await api.conversations.messages(conv!.id)).messages.map((m) => m.content);
}

async function start(text: string) {
  w = await botWorld({ bots: { 'pizza.yaml': text } });
  await w.host.start();
  await w.host.runner('pizza')!.started;
  await w.poll('pizza');
  const pin = w.botUser('pizza').pin_code;
  const send = async (
    who: { api: { messages: { send(b: { recipient_pin: string; content: string }): Promise<unknown> } } },
    content: string,
  ) => {
    await who.api.messages.send({ recipient_pin: pin, content });
    await w.poll('pizza');
  };
  return { pin, send };
}

const memoryOf = (bot = 'pizza', o = {}) =>
  new BotMemory(
    w.server.store,
    bot,
    { maxKeys: 10_000, maxBytes: 4_194_304, maxKeysPerSubject: 100, maxBytesPerSubject: 16_384, ...o },
    () => w.clock.now(),
  );

describe('memory of a person', () => {
  it('two people keep their own memory; a number stays a number; forget all forgets one person only', async () => {
    const { send } = await start(usual());
    const alice = await w.user('Alice');
    const bob = await w.user('Bob');
    await send(alice, 'order large');
    await send(bob, 'order small');
    await send(alice, 'order medium');
    await send(alice, 'usual');
    await send(bob, 'usual');
    expect(await said(alice.api)).toEqual([
      'order large',
      'large it is (order 1)',
      'order medium',
      'medium it is (order 2)',
      'usual',
      'Your usual: medium',
    ]);
    expect(await said(bob.api)).toEqual(['order small', 'small it is (order 1)', 'usual', 'Your usual: small']);
    expect(memoryOf().read('person', alice.user.pin_code)).toEqual({ usual: 'medium', orders: 2 });

    await send(alice, 'forget me');
    await send(alice, 'usual');
    await send(bob, 'usual');
    expect((await said(alice.api)).slice(-3)).toEqual(['Forgotten', 'usual', 'Your usual: none yet']);
    expect((await said(bob.api)).slice(-1)).toEqual(['Your usual: small']);
    expect(memoryOf().read('person', alice.user.pin_code)).toEqual({});
    expect(memoryOf().usage()).toMatchObject({ keys: 2 });
  });

  it('the trace shows what a step remembered, and for whom', async () => {
    const { send } = await start(usual());
    const alice = await w.user('Alice');
    await send(alice, 'order large');
    const t = w.host.traces('pizza')!.find((x) => x.rule === 'order')!;
    expect(t.steps[0]).toMatchObject({
      action: 'remember',
      status: 'done',
      result: { remembered: { usual: 'large', orders: 1 }, person: alice.user.pin_code },
    });
    expect(formatTrace(t)).toContain(
      `do ✓ remember → {"person":"${alice.user.pin_code}","remembered":{"usual":"large","orders":1}}`,
    );
  });

  it("a conversation's memory is the conversation's, not the person's", async () => {
    const { send } = await start(usual());
    const alice = await w.user('Alice');
    await send(alice, 'topic pizza');
    expect((await said(alice.api)).slice(-1)).toEqual(['topic pizza']);
    const [conv] = (await alice.api.conversations.list()).conversations;
    expect(memoryOf().read('conversation', conv!.id)).toEqual({ topic: 'pizza' });
    expect(memoryOf().read('person', alice.user.pin_code)).toEqual({});
  });

  it(
    'ttl: an entry is gone once it is older than memory.ttl on the bot clock, and its ' + 'storage is reclaimed',
    async () => {
      const { send } = await start(usual('memory: { ttl: 2d }\n'));
      const alice = await w.user('Alice');
      const bob = await w.user('Bob');
      await send(alice, 'order large');
      await w.clock.advance(86_400_000); // 1d
      await send(bob, 'order small');
      await send(alice, 'usual');
      expect((await said(alice.api)).slice(-1)).toEqual(['Your usual: large']);
      await w.clock.advance(86_400_000 + 1); // alice's entry is 2d old, bob's 1d
      await send(alice, 'usual');
      await send(bob, 'usual');
      expect((await said(alice.api)).slice(-1)).toEqual(['Your usual: none yet']);
      expect((await said(bob.api)).slice(-1)).toEqual(['Your usual: small']);
      // the expired entries' room is reclaimed by the bot's sweep (hourly, on its clock), with no write of memory
      const m = memoryOf('pizza', { ttlMs: 2 * 86_400_000 });
      await w.clock.advance(3_600_000);
      expect(m.usage().keys).toBe(2);
      expect(await m.sweep()).toBe(0);
      expect(m.list().map((s) => s.subject)).toEqual([bob.user.pin_code]);
    },
  );
});

describe('bounds, through the API', () => {
  it(
    'many strangers each making the bot remember: memory stops at max_keys, the rest ' +
      'fail with limit and on_error answers',
    async () => {
      w = await botWorld({
        bots: {
          'notes.yaml': `name: notes
as: Notes
create_user: true
memory: { max_keys: 10, max_keys_per_person: 2 }
rules:
  - id: note
    on: message.received
    mode: parallel
    do:
      - remember: { note: "{{ event.content }}", pin: "{{ event.sender.pin_code }}" }
      - reply: "noted"
    on_error:
      - reply: "sorry, my memory is full ({{ error.message | truncate: 40 }})"
`,
        },
      });
      await w.host.start();
      await w.host.runner('notes')!.started;
      await w.poll('notes');
      const pin = w.botUser('notes').pin_code;
      const people = await Promise.all(Array.from({ length: 12 }, (_, i) => w.user(`Stranger ${i}`)));
      for (const p of people) await p.api.messages.send({ recipient_pin: pin, content: `spam ${p.user.pin_code}` });
      await w.poll('notes');
      const m = memoryOf('notes', { maxKeys: 10 });
      expect(m.usage().keys).toBe(10);
      expect(m.list()).toHaveLength(5);
      const traces = w.host.traces('notes')!;
      expect(traces.filter((t) => t.outcome === 'done')).toHaveLength(5);
      const failed = traces.filter((t) => t.outcome === 'failed');
      expect(failed).toHaveLength(7);
      expect(failed[0]).toMatchObject({ reason: 'limit' });
      expect(failed[0]!.message).toMatch(
        new RegExp(
          String.raw`the memory of bot notes is full: this write would make it 12 keys ` +
            String.raw`.*at most 10 \(memory\.max_keys\); nothing was written`,
        ),
      );
      const answers = await Promise.all(people.map(async (p) => (await said(p.api)).at(-1)));
      expect(answers.filter((a) => a === 'noted')).toHaveLength(5);
      expect(answers.filter((a) => a?.startsWith('sorry, my memory is full'))).toHaveLength(7);
    },
  );

  it('text that looks like a number is stored as one, but not a PIN of digits with a leading 0', async () => {
    w = await botWorld({
      bots: {
        'n.yaml': `name: n
as: N
create_user: true
rules:
  - on: message.received
    do:
      - remember: { n: "{{ event.content | size }}", zero: "012345", big: "12345678901234567890", yes: "true", text: "{{ event.content }}" }
`,
      },
    });
    await w.host.start();
    await w.host.runner('n')!.started;
    await w.poll('n');
    const alice = await w.user('Alice');
    await alice.api.messages.send({ recipient_pin: w.botUser('n').pin_code, content: '42' });
    await w.poll('n');
    expect(memoryOf('n').read('person', alice.user.pin_code)).toEqual({
      n: 2,
      zero: '012345',
      big: '12345678901234567890',
      yes: true,
      text: 42,
    });
  });
});

describe('the reminder example (bots/reminder.yaml)', () => {
  it(
    "two people keep their own reminder; asking again replaces one's own; stop cancels " +
      "one's own; on the virtual clock",
    async () => {
      const { readFileSync } = await import('node:fs');
      const { join } = await import('node:path');
      w = await botWorld({
        bots: { 'reminder.yaml': readFileSync(join(import.meta.dirname, '../../bots/reminder.yaml'), 'utf8') },
      });
      await w.host.start();
      await w.host.runner('reminder')!.started;
      await w.poll('reminder');
      const pin = w.botUser('reminder').pin_code;
      const alice = await w.user('Alice');
      const bob = await w.user('Bob');
      const carol = await w.user('Carol');
      const send = async (who: typeof alice, content: string) => {
        await who.api.messages.send({ recipient_pin: pin, content });
        await w.poll('reminder');
      };
      await send(alice, 'remind me in 2h to call mom');
      await send(bob, 'remind me in 1h to water the plants');
      await send(carol, 'remind me in 1h to stretch');
      await send(carol, 'stop');
      await send(alice, 'my reminder');
      await w.clock.advance(3_600_000); // 1h: bob's is due
      await send(alice, 'remind me in 2h to call dad'); // replaces alice's first (due in 1h) with this one
      await w.clock.advance(3_600_000); // alice's first would be due now: replaced, so nothing
      expect((await said(alice.api)).filter((m) => m.startsWith('Reminder:'))).toEqual([]);
      await w.clock.advance(3_600_000);
      expect(await said(alice.api)).toEqual([
        'remind me in 2h to call mom',
        'OK Alice, in 2h I will remind you to call mom. Say stop to cancel.',
        'my reminder',
        'You asked me to remind you to call mom.',
        'remind me in 2h to call dad',
        'OK Alice, in 2h I will remind you to call dad. Say stop to cancel.',
        'Reminder: call dad',
      ]);
      expect((await said(bob.api)).slice(-1)).toEqual(['Reminder: water the plants']);
      expect((await said(carol.api)).slice(-2)).toEqual(['stop', 'Done, no more reminders.']);
      // every reminder collected or cancelled: nothing is left in memory
      expect(memoryOf('reminder').list()).toEqual([]);
    },
  );
});
