import { afterEach, describe, expect, it } from 'vitest';
import { BotDialogs, BotInbox, type DialogRecord, type InboxEntry } from '../../src/runtime/state/bot-state.js';
import { compactJson, compactSeed, keepParts } from '../../src/runtime/state/compact.js';
import { createTestWorld, type TestWorld } from '../../src/testing/world.js';

/** What a waiting dialog keeps in memory (bench `dialogs`: ≤ 2 KB each), and that it changes nothing stored. */

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const SHOP = `name: shop
as: shop
rules:
  - id: order
    on: message.received
    if: { content: { matches: "^order$" } }
    do:
      - ask: { question: "What size?", save: size, expect: { choice: [small, large] } }
      - reply: "Ordered {{ answers.size }}"
  - id: survey
    on: message.received
    if: { content: { matches: "^survey$" } }
    do:
      - ask: { question: "Rate us 1-5", save: stars, expect: { number: { min: 1, max: 5 } } }
      - reply: "Thanks: {{ answers.stars }}"
`;

async function shop(): Promise<TestWorld> {
  world = await createTestWorld({ users: { alice: {}, bob: {}, shop: {} } });
  await world.addBot(SHOP);
  return world;
}

async function say(name: string, text: string, conversation?: string) {
  if (conversation) await world!.users[name]!.api.conversations.send(conversation, { content: text });
  else await world!.as(name).send('shop', text);
  await world!.settle();
}

const isDeepFrozen = (v: unknown): boolean =>
  v === null || typeof v !== 'object' || (Object.isFrozen(v) && Object.values(v).every(isDeepFrozen));

describe('a waiting dialog keeps only what is its own', () => {
  it('two people waiting: the ask, the decision and the bot are one object; the record holds the sender of its entry', async () => {
    const w = await shop();
    await say('alice', 'order');
    await say('bob', 'order');
    const runner = w.host.runner('shop')!;
    const recs = runner.dialogs();
    expect(recs.map((r) => r.person.display_name).sort()).toEqual(['alice', 'bob']);
    const inbox = w.server.store.read.col(BotInbox);
    const [a, b] = recs.map((r) => inbox.get(r.entry)!) as [InboxEntry, InboxEntry];
    const step = (e: InboxEntry) => e.runs.order!.steps[0]!;
    expect(step(a).args).toEqual({
      question: 'What size?',
      save: 'size',
      expect: { choice: ['small', 'large'] },
      attempts: 3,
      timeout_ms: 3_600_000,
    });
    expect(step(a).args).toBe(step(b).args);
    expect(a.runs.order!.decision).toBe(b.runs.order!.decision);
    const bot = (e: InboxEntry) =>
      (e.event.payload.conversation as { participants: Array<{ display_name: string }> }).participants.find(
        (p) => p.display_name === 'shop',
      );
    expect(bot(a)).toBeDefined();
    expect(bot(a)).toBe(bot(b));
    for (const [rec, entry] of [
      [recs[0], inbox.get(recs[0]!.entry)],
      [recs[1], inbox.get(recs[1]!.entry)],
    ] as Array<[DialogRecord, InboxEntry]>) {
      expect(rec.person).toBe(entry.event.payload.sender);
      expect(step(entry).dialog?.key).toBe(rec.id);
      expect(isDeepFrozen(rec) && isDeepFrozen(entry)).toBe(true);
    }
    // and what they hold is theirs: each answer goes to its own dialog
    await say('alice', 'large');
    await say('bob', 'small');
    expect((await w.inbox('alice')).at(-1)?.content).toBe('Ordered large');
    expect((await w.inbox('bob')).at(-1)?.content).toBe('Ordered small');
    expect(runner.dialogs()).toEqual([]);
  });

  it('a person in dialogs in two conversations (no index per person): ending one conversation ends that one, ending the person the rest, no one else’s', async () => {
    const w = await shop();
    const group = await w.users.alice!.api.conversations.create({
      name: 'team',
      participant_pins: [w.users.bob!.pin_code, w.users.shop!.pin_code],
    });
    await say('alice', 'order');
    await say('alice', 'survey', group.id);
    await say('bob', 'order');
    const runner = w.host.runner('shop')!;
    const who = () =>
      runner
        .dialogs()
        .map((d) => `${d.person.display_name} ${d.rule} ${d.conversation === group.id ? 'group' : 'direct'}`)
        .sort();
    expect(who()).toEqual(['alice order direct', 'alice survey group', 'bob order direct']);
    const alice = w.users.alice!.pin_code;
    expect((await runner.endDialogs(alice, group.id)).map((d) => d.rule)).toEqual(['survey']);
    expect(who()).toEqual(['alice order direct', 'bob order direct']);
    expect((await runner.endDialogs(alice)).map((d) => d.rule)).toEqual(['order']);
    expect(await runner.endDialogs(alice)).toEqual([]);
    expect(who()).toEqual(['bob order direct']);
    expect(w.server.store.read.col(BotDialogs).count()).toBe(1);
  });
});

describe('compactJson', () => {
  it('gives an equal, deeply frozen value; small objects met before are that one; long ones are the value’s own', () => {
    const long = 'x'.repeat(300);
    const v = { id: 'rec_1', args: { question: 'What size?', choice: ['s', 'l'] }, big: { text: long }, n: 1.5 };
    const a = compactJson(v);
    const b = compactJson({ ...v, id: 'rec_2' });
    expect(a).toEqual(v);
    expect(isDeepFrozen(a)).toBe(true);
    expect(a.args).toBe(b.args);
    expect(a.big).not.toBe(b.big);
    expect(a).not.toBe(b);
    // the input is left alone
    expect(Object.isFrozen(v)).toBe(false);
    expect(Object.isFrozen(v.args)).toBe(false);
  });

  it('a seed gives the parts of a record compacted before, key order and all', () => {
    const entry = compactJson({ id: 'e1', sender: { id: 'usr_1', display_name: 'ann', pin_code: 'AAAAAA' } });
    const seed = compactSeed();
    keepParts(seed, entry);
    const rec = compactJson({ id: 'd1', person: { id: 'usr_1', display_name: 'ann', pin_code: 'AAAAAA' } }, seed);
    expect(rec.person).toBe(entry.sender);
    const other = compactJson({ id: 'd2', person: { id: 'usr_1', pin_code: 'AAAAAA', display_name: 'ann' } }, seed);
    expect(other.person).toEqual(entry.sender);
    expect(other.person).not.toBe(entry.sender); // another key order is another JSON text
    // a long text makes its holders too long to share, a small part of them is still noted
    const big = compactJson({ id: 'e2', event: { content: 'y'.repeat(300), to: { pin: 'BBBBBB' } } });
    const seed2 = compactSeed();
    expect(keepParts(seed2, big)).toBe(true);
    expect(keepParts(seed2, { pin: 'BBBBBB' })).toBe(false);
    expect(compactJson({ id: 'd3', to: { pin: 'BBBBBB' } }, seed2).to).toBe(big.event.to);
  });

  it('the shared table is bounded: a value not met again is forgotten', () => {
    const first = compactJson({ id: 'a', part: { probe: 'forgotten-later' } }).part;
    expect(compactJson({ id: 'b', part: { probe: 'forgotten-later' } }).part).toBe(first);
    for (let i = 0; i < 5000; i++) compactJson({ id: `r${i}`, part: { n: i } });
    const again = compactJson({ id: 'c', part: { probe: 'forgotten-later' } }).part;
    expect(again).toEqual(first);
    expect(again).not.toBe(first);
  });
});
