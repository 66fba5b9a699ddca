import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestWorld, type TestWorld } from 'pinbot/testing';
import { pluginState } from '../../src/plugin-api/state.js';
import { MemoryStore } from '../../src/store/core/memory-store.js';

/**
 * What every plugin call gets: its validated settings, a client acting as the bot, a logger
 * carrying plugin, bot and rule, state kept per plugin and per bot in the store (surviving a
 * restart), and `schedule` on the shared clock (virtual here).
 */

const NOTES = 'test/plugins/fixtures/notes.ts';
const noteBot = (name: string) =>
  `name: ${name}\nas: ${name}\nrules:\n  - id: add\n    on: message.received\n    ` +
  `if: { content: { matches: "^note " } }\n    do:\n      - notes.add: { text: "{{ ` +
  `event.content | remove_first: 'note ' }}" }\n  - id: remind\n    on: ` +
  `message.received\n    if: { content: remind }\n    do:\n      - notes.remind: ` +
  `{}\n`;

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('the plugin context', () => {
  it('settings, the client acting as the bot, per-bot state that survives a restart, and the logger', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) });
    world = await createTestWorld({
      users: { alice: {}, n1: {}, n2: {} },
      config: { rate_limits: { enabled: false }, plugins: { config: { notes: { prefix: 'Note' } } } },
      plugins: [NOTES],
      bots: [noteBot('n1'), noteBot('n2')],
      log: pino({ level: 'info' }, sink),
    });
    await world.as('alice').send('n1', 'note milk');
    await world.as('alice').send('n1', 'note eggs');
    await world.as('alice').send('n2', 'note bread');
    await world.advance('5s');
    expect((await world.inbox('alice')).map((m) => m.content).sort()).toEqual([
      'Note 1 kept by n1',
      'Note 1 kept by n2',
      'Note 2 kept by n1',
    ]);
    expect(await world.state('notes', 'n1')).toEqual({ notes: ['milk', 'eggs'] });
    expect(await world.state('notes', 'n2')).toEqual({ notes: ['bread'] });
    expect(lines.find((l) => l.msg === 'note added' && l.bot === 'n2')).toMatchObject({
      plugin: 'notes',
      bot: 'n2',
      rule: 'add',
      count: 1,
    });

    await world.restart();
    await world.as('alice').send('n1', 'note tea');
    await world.advance('5s');
    expect((await world.inbox('alice')).map((m) => m.content)).toContain('Note 3 kept by n1');
    expect(await world.state('notes', 'n1')).toEqual({ notes: ['milk', 'eggs', 'tea'] });
  });

  it(
    'schedule: a job from setup and one from an action fire at their virtual times; ' + 'scheduling again replaces',
    async () => {
      world = await createTestWorld({
        start: '2026-01-01T09:00:00Z',
        users: { alice: {}, n1: {} },
        plugins: [NOTES],
        bots: [noteBot('n1')],
        config: { rate_limits: { enabled: false } },
      });
      await world.as('alice').send('n1', 'note one');
      await world.as('alice').send('n1', 'remind');
      await world.as('alice').send('n1', 'remind');
      await world.advance('5s');
      expect(await world.state('notes')).toEqual({});
      await world.advance('9h'); // 18:00:05: the reminder job of bot n1, once (the second replaced the first)
      expect((await world.inbox('alice')).map((m) => m.content).filter((c) => c.startsWith('reminder'))).toEqual([
        'reminder: 1 notes',
      ]);
      // the setup job: Jan 2 and Jan 3 at 09:00; a second reminder on Jan 2
      await world.advanceTo('2026-01-03T09:30:00Z');
      expect(await world.state('notes')).toEqual({ digests: 2 });
      expect((await world.inbox('alice')).filter((m) => m.content.startsWith('reminder'))).toHaveLength(2);
    },
  );
});

describe('plugin state', () => {
  it('a write made by a step that runs again (after a crash, or a retried request) is applied once', async () => {
    const store = new MemoryStore();
    const first = pluginState(store, 'karma', 'bot', 'pinbot:bot:rule:abc:0');
    expect(await first.update<number>('ABC123', (n = 0) => n + 1)).toBe(1);
    // the same step again: its first write is already applied
    const again = pluginState(store, 'karma', 'bot', 'pinbot:bot:rule:abc:0');
    expect(await again.update<number>('ABC123', (n = 0) => n + 1)).toBe(1);
    // another step (another event) counts
    expect(
      await pluginState(store, 'karma', 'bot', 'pinbot:bot:rule:def:0').update<number>('ABC123', (n = 0) => n + 1),
    ).toBe(2);
    // per plugin and per bot
    expect(await pluginState(store, 'karma', 'other').get('ABC123')).toBeUndefined();
    expect(await pluginState(store, 'other', 'bot').get('ABC123')).toBeUndefined();
    expect(await pluginState(store, 'karma', 'bot').entries()).toEqual([['ABC123', 2]]);
  });

  it('refuses what the store cannot keep, and changes nothing', async () => {
    const store = new MemoryStore();
    const s = pluginState(store, 'p', 'b');
    await expect(s.set('', 1)).rejects.toThrow('a state key is a string of 1 to 200 characters, not ""');
    await expect(s.set('f', () => 1)).rejects.toThrow(
      'state f: the value is not JSON data (function); use delete to remove a key',
    );
    await expect(s.set('big', 'x'.repeat(300_000))).rejects.toThrow(
      'state big: the value is 293 KB; at most 256 KB per key',
    );
    await expect(s.update('n', async () => 1)).rejects.toThrow('update takes a synchronous function');
    expect(await s.entries()).toEqual([]);
    const got = await s.update<{ list: number[] }>('o', () => ({ list: [1] }));
    got.list.push(2); // a copy: the store keeps what was written
    expect(await s.get('o')).toEqual({ list: [1] });
  });
});
