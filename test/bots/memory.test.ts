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
  const send = async (who: { api: { messages: { send(b: { recipient_pin: string; content: string }): Promise<unknown> } } }, content: string) => {
    await who.api.messages.send({ recipient_pin: pin, content });
    await w.poll('pizza');
  };
  return { pin, send };
}

const memoryOf = (bot = 'pizza', o = {}) => new BotMemory(w.server.store, bot, { maxKeys: 10_000, maxBytes: 4_194_304, maxKeysPerSubject: 100, maxBytesPerSubject: 16_384, ...o }, () => w.clock.now());

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
    expect(await said(alice.api)).toEqual(['order large', 'large it is (order 1)', 'order medium', 'medium it is (order 2)', 'usual', 'Your usual: medium']);
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
    expect(t.steps[0]).toMatchObject({ action: 'remember', status: 'done', result: { remembered: { usual: 'large', orders: 1 }, person: alice.user.pin_code } });
    expect(formatTrace(t)).toContain(`do ✓ remember → {"person":"${alice.user.pin_code}","remembered":{"usual":"large","orders":1}}`);
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

  it('ttl: an entry is gone once it is older than memory.ttl on the bot clock, and its storage is reclaimed', async () => {
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
    // expired entries still take room until a write of the bot or its next start reclaims them
    const m = memoryOf('pizza', { ttlMs: 2 * 86_400_000 });
    expect(m.usage().keys).toBe(4);
    expect(await m.sweep()).toBe(2);
    expect(m.usage().keys).toBe(2);
    expect(m.list().map((s) => s.subject)).toEqual([bob.user.pin_code]);
  });
});

describe('the reminder example (bots/reminder.yaml)', () => {
  it('two people keep their own reminder; asking again replaces one\'s own; stop cancels one\'s own; on the virtual clock', async () => {
    const { readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    w = await botWorld({ bots: { 'reminder.yaml': readFileSync(join(import.meta.dirname, '../../bots/reminder.yaml'), 'utf8') } });
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
      'remind me in 2h to call mom', 'OK Alice, in 2h I will remind you to call mom. Say stop to cancel.',
      'my reminder', 'You asked me to remind you to call mom.',
      'remind me in 2h to call dad', 'OK Alice, in 2h I will remind you to call dad. Say stop to cancel.',
      'Reminder: call dad',
    ]);
    expect((await said(bob.api)).slice(-1)).toEqual(['Reminder: water the plants']);
    expect((await said(carol.api)).slice(-2)).toEqual(['stop', 'Done, no more reminders.']);
    // every reminder collected or cancelled: nothing is left in memory
    expect(memoryOf('reminder').list()).toEqual([]);
  });
});
