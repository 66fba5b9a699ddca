import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin } from 'pinbot/plugin';
import { createTestWorld, type TestWorld } from 'pinbot/testing';
import feed, { items } from './fixtures/feeds.js';

/**
 * Plugin events go through the same inbox, cursor, trace and exactly-once path as built-in
 * ones: a poll source on the bot's cadence from a persisted cursor, a push source emitting from
 * setup on the shared clock; both used in YAML like any trigger.
 */

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
  items.length = 0;
});

const notify = (name: string, on: string, content: string) =>
  `name: ${name}\nas: ${name}\nrules:\n  - on: ${on}\n    do:\n      - send_message: ` +
  `{ to: "{{ vars.to }}", content: "${content}" }\n`;

/**
 * A plugin whose poll source `line` reads the lines of a temp file: outside pinbot, so nothing
 * pinbot does wakes it. The cursor is the number of lines read. Internal.
 */
function linesSource({ withNumber }: { withNumber: boolean }) {
  const dir = mkdtempSync(join(tmpdir(), 'pinbot-file-source-'));
  const file = join(dir, 'lines.txt');
  writeFileSync(file, '');
  const lines = definePlugin({
    name: 'lines',
    version: '1.0.0',
    pinbot: '^0.1.0',
    sources: {
      line: {
        ...(withNumber ? { example: { n: 1, text: 'hello' } } : {}),
        async poll(_ctx, cursor) {
          const all = readFileSync(file, 'utf8').split('\n').filter(Boolean);
          const from = typeof cursor === 'number' ? cursor : all.length;
          return {
            events: all.slice(from).map((text, i) => ({
              key: String(from + i + 1),
              payload: withNumber ? { n: from + i + 1, text } : { text },
            })),
            cursor: all.length,
          };
        },
      },
    },
  });
  return { dir, file, lines };
}

describe('plugin event sources', () => {
  it(
    'a poll source runs on the poll cadence from its persisted cursor; nothing is seen ' + 'twice across a restart',
    async () => {
      world = await createTestWorld({
        users: { alice: {}, reader: {} },
        config: { rate_limits: { enabled: false } },
        plugins: [feed],
      });
      await world.addBot(
        notify('reader', 'feed.item', 'new: {{ event.title }}').replace(
          'rules:',
          `vars: { to: "${world.users.alice!.pin_code}" }\nrules:`,
        ),
      );
      items.push({ id: 1, title: 'one' }, { id: 2, title: 'two' });
      await world.advance('5s');
      items.push({ id: 3, title: 'three' });
      await world.restart();
      await world.advance('5s');
      expect((await world.inbox('alice')).map((m) => m.content)).toEqual(['new: one', 'new: two', 'new: three']);
      expect(world.traces('reader').map((t) => [t.event.type, t.event.key, t.outcome])).toEqual([
        ['feed.item', 'feed.item:1', 'done'],
        ['feed.item', 'feed.item:2', 'done'],
        ['feed.item', 'feed.item:3', 'done'],
      ]);
    },
  );

  it(
    'a poll source reading a file is polled at its cadence on the virtual clock, with ' + 'no other change in pinbot',
    async () => {
      const { dir, file, lines } = linesSource({ withNumber: true });
      try {
        world = await createTestWorld({
          users: { alice: {}, reader: {} },
          config: { rate_limits: { enabled: false } },
          plugins: [lines],
        });
        await world.addBot(
          notify('reader', 'lines.line', 'line {{ event.n }}: {{ event.text }}').replace(
            'rules:',
            `poll: 10s\nvars: { to: "${world.users.alice!.pin_code}" }\nrules:`,
          ),
        );
        await world.advance('1m'); // whatever the start changed has settled: only the cadence is left
        writeFileSync(file, 'first\n');
        await world.advance('10s');
        expect((await world.inbox('alice')).map((m) => m.content)).toEqual(['line 1: first']);
        // an hour of nothing in pinbot, then two more lines
        await world.advance('1h');
        writeFileSync(file, 'first\nsecond\nthird\n');
        await world.advance('10s');
        expect((await world.inbox('alice')).map((m) => m.content)).toEqual([
          'line 1: first',
          'line 2: second',
          'line 3: third',
        ]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it('a file source keeps its cadence beside a built-in source whose idle poll (a heartbeat) comes first', async () => {
    const { dir, file, lines } = linesSource({ withNumber: false });
    try {
      world = await createTestWorld({
        users: { alice: {}, reader: {} },
        config: { rate_limits: { enabled: false } },
        plugins: [lines],
      });
      const to = world.users.alice!.pin_code;
      // poll 7s: the messages source's idle poll every 10 min falls between two file polls (595 s, 602 s)
      await world.addBot(
        `name: reader\nas: reader\npoll: 7s\nrules:\n  - on: lines.line\n    do:\n   ` +
          `   - send_message: { to: "${to}", content: "line: {{ event.text }}" }\n  - ` +
          `on: message.received\n    do:\n      - reply: "hi"\n`,
      );
      await world.advance('11m');
      writeFileSync(file, 'late\n');
      await world.advance('7s');
      expect((await world.inbox('alice')).map((m) => m.content)).toEqual(['line: late']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a poll source that reads only pinbot (reads: pinbot) waits for a change on the virtual clock', async () => {
    let polls = 0;
    const quiet = definePlugin({
      name: 'quiet',
      version: '1.0.0',
      pinbot: '^0.1.0',
      sources: {
        tick: {
          reads: 'pinbot',
          async poll(_ctx, cursor) {
            polls++;
            return { events: [], cursor: cursor ?? 0 };
          },
        },
      },
    });
    world = await createTestWorld({
      users: { alice: {}, reader: {} },
      config: { rate_limits: { enabled: false } },
      plugins: [quiet],
    });
    await world.addBot(
      notify('reader', 'quiet.tick', 'never').replace(
        'rules:',
        `poll: 10s\nvars: { to: "${world.users.alice!.pin_code}" }\nrules:`,
      ),
    );
    await world.advance('1m');
    const before = polls;
    await world.advance('1h'); // no change in pinbot (the next UBI is at midnight): no poll
    expect(polls).toBe(before);
    await world.as('alice').send('reader', 'hi'); // a change that concerns the bot wakes it
    await world.settle();
    expect(polls).toBeGreaterThan(before);
  });

  it('a push source emits from setup on the clock to every bot listening, once per key', async () => {
    world = await createTestWorld({
      start: '2026-01-01T09:00:30Z',
      users: { alice: {}, t1: {}, t2: {}, deaf: {} },
      config: { rate_limits: { enabled: false } },
      plugins: [feed],
    });
    const to = `vars: { to: "${world.users.alice!.pin_code}" }\nrules:`;
    await world.addBot(notify('t1', 'feed.tick', 't1 {{ event.at }} of {{ event.listeners }}').replace('rules:', to));
    await world.addBot(notify('t2', 'feed.tick', 't2 {{ event.at }}').replace('rules:', to));
    await world.addBot(notify('deaf', 'message.received', 'never').replace('rules:', to));
    await world.advance('2m');
    expect((await world.inbox('alice')).map((m) => m.content).sort()).toEqual([
      't1 2026-01-01T09:01:00.000Z of 2',
      't1 2026-01-01T09:02:00.000Z of 2',
      't2 2026-01-01T09:01:00.000Z',
      't2 2026-01-01T09:02:00.000Z',
    ]);
    expect(world.traces('t1').map((t) => t.event.key)).toEqual([
      'feed.tick:2026-01-01T09:01:00.000Z',
      'feed.tick:2026-01-01T09:02:00.000Z',
    ]);
    expect(world.traces('deaf')).toEqual([]);
  });
});
