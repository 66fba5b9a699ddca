import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/core/memory-store.js';
import { createRegistry } from '../../src/runtime/registry.js';
import { loadBot } from '../../src/runtime/define/loader.js';
import { BotMemories } from '../../src/runtime/state/bot-records.js';
import { BotMemory, MemoryFullError } from '../../src/runtime/state/memory.js';
import { formatProblem } from '../../src/util/yaml-errors.js';

const registry = createRegistry();
const problems = (text: string) => loadBot('bot.yaml', text, { registry, env: {} }).problems.map(formatProblem);
const head = 'name: t\nas: alice\nrules:\n';

describe('memory in bot files: refused where the event has no person or conversation, at file:line:col', () => {
  it.each([
    [
      'remember on a schedule',
      `${head}  - on: { schedule: "0 9 * * *" }\n    do:\n      - remember: { seen: "yes" }\n`,
      new RegExp(
        String.raw`^bot\.yaml:6:19: rules\.0\.do\.0\.remember: remember writes the memory ` +
          String.raw`of the person an event is about, and schedule events are about no ` +
          String.raw`person — use it with message\.received`,
      ),
    ],
    [
      'forget on startup',
      `${head}  - on: startup\n    do:\n      - forget: [seen]\n`,
      new RegExp(
        String.raw`^bot\.yaml:6:17: rules\.0\.do\.0\.forget: forget writes the memory of ` +
          String.raw`the person an event is about, and startup events are about no person`,
      ),
    ],
    [
      'remember in a conversation on a transfer',
      `${head}  - on: transfer.received\n    do:\n      - remember: { in: conversation, x: "1" }\n`,
      new RegExp(
        String.raw`^bot\.yaml:6:19: rules\.0\.do\.0\.remember: remember with in: ` +
          String.raw`conversation writes a conversation's memory, and transfer\.received ` +
          String.raw`events are in no conversation`,
      ),
    ],
    [
      'memory read on balance.changed',
      `${head}  - on: balance.changed\n    do:\n      - log: "{{ memory.x }}"\n`,
      new RegExp(
        String.raw`^bot\.yaml:6:14: rules\.0\.do\.0\.log: memory\.x: balance\.changed ` +
          String.raw`events are about no person, so there is no memory to read — memory is ` +
          String.raw`per person`,
      ),
    ],
    [
      'memory in a liquid condition of a schedule',
      `${head}  - on: { schedule: "0 9 * * *" }\n    if: { liquid: "memory.on" }\n    do: [{ log: hi }]\n`,
      /^bot\.yaml:5:19: rules\.0\.if\.liquid: memory\.on: schedule events are about no person/,
    ],
    [
      'conversation_memory on a contact request',
      `${head}  - on: contact_request.received\n    do:\n      - reply: "{{ conversation_memory.x }}"\n`,
      /conversation_memory\.x: contact_request\.received events are in no conversation/,
    ],
    [
      'a bad memory key',
      `${head}  - on: message.received\n    do:\n      - remember: { "my key": "1" }\n`,
      /^bot\.yaml:6:\d+: rules\.0\.do\.0\.remember/,
    ],
    [
      'remember with nothing to remember',
      `${head}  - on: message.received\n    do:\n      - remember: { in: person }\n`,
      /remember needs at least one KEY: value/,
    ],
    [
      'forget with a bad form',
      `${head}  - on: message.received\n    do:\n      - forget: everything\n`,
      /^bot\.yaml:6:\d+: rules\.0\.do\.0\.forget/,
    ],
    [
      'a bad ttl',
      `name: t\nas: a\nmemory: { ttl: 90 days }\nrules:\n  - on: message.received\n  ` +
        `  do: [{ remember: { a: "1" } }]\n`,
      /^bot\.yaml:3:16: memory\.ttl: expected a duration, not "90 days"/,
    ],
    [
      'an unknown memory option',
      `name: t\nas: a\nmemory: { tll: 9d }\nrules:\n  - on: message.received\n    do: [{ remember: { a: "1" } }]\n`,
      /^bot\.yaml:3:11: memory\.tll: unknown key "tll" — did you mean "ttl"\?/,
    ],
  ])('%s', (_what, text, expected) => {
    const found = problems(text);
    expect(
      found.some((p) => expected.test(p)),
      found.join('\n'),
    ).toBe(true);
  });

  it('is fine on every trigger that has a person (and a conversation where it reads one)', () => {
    const text =
      `${head}  - on: [message.received, transfer.received, transfer.accepted, ` +
      `introduction.received, contact_request.received, contact.added]\n    do:\n      ` +
      `- remember: { seen: "{{ memory.seen | default: 0 | plus: 1 }}" }\n      - ` +
      `forget: [old]\n  - on: message.received\n    do:\n      - remember: { in: ` +
      `conversation, t: "{{ conversation_memory.t }}" }\n      - forget: { in: ` +
      `conversation, keys: all }\n`;
    expect(problems(text)).toEqual([]);
  });
});

describe('memory bounds: past one, a clear error and nothing written', () => {
  const now = () => 1_000;
  const opts = { maxKeys: 10, maxBytes: 400, maxKeysPerSubject: 3, maxBytesPerSubject: 100 };
  const person = (subject: string, set: Record<string, unknown>) => ({ scope: 'person' as const, subject, set });

  it('keys of one person: the 4th key is refused, naming the bound and what to do; the 3 are kept', async () => {
    const store = new MemoryStore();
    const m = new BotMemory(store, 'b', opts, now);
    await m.apply([person('AAA111', { a: 1, b: 2, c: 3 })]);
    const err = await m.apply([person('AAA111', { d: 4 })]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MemoryFullError);
    expect((err as Error).message).toBe(
      'remember d: the memory of person AAA111 for bot b would have 4 keys, at most 3 ' +
        '(memory.max_keys_per_person); nothing was written — forget keys it no longer ' +
        'needs, or raise memory.max_keys_per_person in the bot file',
    );
    expect(m.read('person', 'AAA111')).toEqual({ a: 1, b: 2, c: 3 });
    // replacing a key does not grow it: allowed
    await m.apply([person('AAA111', { a: 'x' })]);
    expect(m.read('person', 'AAA111')).toMatchObject({ a: 'x' });
  });

  it('bytes of one person: a long value is refused whole', async () => {
    const m = new BotMemory(new MemoryStore(), 'b', opts, now);
    await expect(m.apply([person('AAA111', { note: 'x'.repeat(200) })])).rejects.toThrow(
      /would hold 206 bytes, at most 100 \(memory\.max_bytes_per_person\); nothing was written/,
    );
    expect(m.read('person', 'AAA111')).toEqual({});
    expect(m.usage()).toEqual({ keys: 0, bytes: 0 });
  });

  it(
    'the attack: many senders each writing fill the bot up to max_keys and no further; ' +
      'a changes set of two is all or nothing',
    async () => {
      const store = new MemoryStore();
      const m = new BotMemory(store, 'b', { ...opts, maxKeys: 50, maxBytes: 1_000_000 }, now);
      const refused: string[] = [];
      for (let i = 0; i < 200; i++) {
        const pin = `P${String(i).padStart(5, '0')}`;
        await m.apply([person(pin, { junk: 'spam' })]).catch((e: Error) => refused.push(e.message));
      }
      expect(m.usage().keys).toBe(50);
      expect(refused).toHaveLength(150);
      expect(refused[0]).toMatch(
        new RegExp(
          String.raw`^remember junk: the memory of bot b is full: this write would make ` +
            String.raw`it 51 keys \(every person and conversation\), at most 50 ` +
            String.raw`\(memory\.max_keys\); nothing was written — set memory\.ttl so old ` +
            String.raw`entries age out, forget keys \(pinbot bots memory b --person PIN ` +
            String.raw`--forget KEY\), or raise memory\.max_keys`,
        ),
      );
      // records stay bounded too: a refused sender has none
      expect([...store.read.col(BotMemories).all()].length).toBe(51); // 50 people and the usage record
      // a stranger's forget leaves no empty record behind
      await m.apply([{ scope: 'person', subject: 'ZZZ999', forget: 'all' }], 'step-1');
      expect([...store.read.col(BotMemories).all()].length).toBe(51);
      // bytes of the bot
      const small = new BotMemory(new MemoryStore(), 'b', { ...opts, maxBytes: 60 }, now);
      await small.apply([person('AAA111', { a: 'x'.repeat(40) })]);
      await expect(
        small.apply([person('BBB222', { b: 'y'.repeat(10) }), person('CCC333', { c: 'z'.repeat(10) })]),
      ).rejects.toThrow(/\(memory\.max_bytes\); nothing was written/);
      expect(small.read('person', 'BBB222')).toEqual({});
    },
  );

  it('a write under a mark already applied (the same step after a crash) is not applied twice', async () => {
    const m = new BotMemory(new MemoryStore(), 'b', opts, now);
    await m.apply([person('AAA111', { n: 1 })], 'key-1');
    await m.apply([person('AAA111', { n: 2 })], 'key-1');
    expect(m.read('person', 'AAA111')).toEqual({ n: 1 });
    await m.apply([person('AAA111', { n: 2 })], 'key-2');
    expect(m.read('person', 'AAA111')).toEqual({ n: 2 });
  });

  it('a value that is not JSON, or a bad key, is refused before anything is written', async () => {
    const m = new BotMemory(new MemoryStore(), 'b', opts, now);
    await expect(m.apply([person('AAA111', { f: () => 1 })])).rejects.toThrow(/memory f: the value is not JSON data/);
    await expect(m.apply([person('AAA111', { 'a b': 1 })])).rejects.toThrow(
      /memory key "a b": a key is a name of letters/,
    );
  });

  it(
    'ttl: a write reclaims a few expired subjects on its way (its cost stays bounded); ' +
      'the sweep takes the rest, in batches',
    async () => {
      let t = 0;
      const store = new MemoryStore();
      const m = new BotMemory(store, 'b', { ...opts, maxKeys: 5000, maxBytes: 1_000_000, ttlMs: 1000 }, () => t);
      for (let i = 0; i < 1200; i++) await m.apply([person(`P${i}`, { a: 1 })]);
      t = 1001;
      expect(m.read('person', 'P0')).toEqual({});
      await m.apply([person('NEW001', { a: 1 })]);
      expect(m.usage().keys).toBe(1200 + 1 - 20);
      expect(await m.sweep()).toBe(1180);
      expect(m.usage()).toEqual({ keys: 1, bytes: 2 });
      expect([...store.read.col(BotMemories).all()].length).toBe(2);
      expect(await m.sweep()).toBe(0);
    },
  );
});
