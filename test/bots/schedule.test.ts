import { afterEach, describe, expect, it } from 'vitest';
import { botWorld, type BotWorld } from '../helpers/bots.js';

let w: BotWorld;
afterEach(() => w?.close());

describe('schedule (driven by the virtual clock)', () => {
  it('fires at each due time in its time zone, in order, when the clock is advanced', async () => {
    w = await botWorld();
    const alice = await w.user('Alice');
    w.writeBot(
      'daily.yaml',
      `name: daily\nas: Daily\ncreate_user: true\nrules:\n  - on: { schedule: { ` +
        `cron: "0 9 * * *", timezone: Europe/Paris } }\n    do:\n      - send_message: ` +
        `{ to: ${alice.user.pin_code}, content: "tick {{ event.at }} (clock {{ now }})" ` +
        `}\n`,
    );
    await w.host.start();
    await w.host.runner('daily')!.started;
    // T0 is Saturday 2026-11-21 12:00 UTC; 09:00 in Paris is 08:00 UTC in November
    await w.clock.advanceTo(Date.parse('2026-11-23T09:00:00Z'));
    const [conv] = (await alice.api.conversations.list()).conversations;
    const got = (await alice.api.conversations.messages(conv!.id)).messages.map((m) => m.content);
    expect(got).toEqual([
      'tick 2026-11-22T08:00:00.000Z (clock 2026-11-22T08:00:00.000Z)',
      'tick 2026-11-23T08:00:00.000Z (clock 2026-11-23T08:00:00.000Z)',
    ]);
    expect(w.host.traces('daily')!.map((t) => [t.event.type, t.at])).toEqual([
      ['schedule', '2026-11-22T08:00:00.000Z'],
      ['schedule', '2026-11-23T08:00:00.000Z'],
    ]);
  });

  it('a weekday schedule: a message on weekday mornings only, in its time zone', async () => {
    w = await botWorld();
    const alice = await w.user('Alice');
    w.writeBot(
      'weekdays.yaml',
      `name: weekdays\nas: Weekdays\ncreate_user: true\nrules:\n  - on: { schedule: ` +
        `{ cron: "0 9 * * 1-5", timezone: Europe/Paris } }\n    do:\n      - ` +
        `send_message: { to: ${alice.user.pin_code}, content: "Good morning! This is ` +
        `your 09:00 reminder." }\n`,
    );
    await w.host.start();
    await w.host.runner('weekdays')!.started;
    // Monday 23 to Friday 27 at 08:00 UTC; Saturday 28 and Sunday 29 are skipped
    await w.clock.advanceTo(Date.parse('2026-11-30T07:00:00Z'));
    const [conv] = (await alice.api.conversations.list()).conversations;
    const got = (await alice.api.conversations.messages(conv!.id)).messages.map((m) => m.content);
    expect(got).toEqual(Array(5).fill('Good morning! This is your 09:00 reminder.'));
  });
});

describe('missed schedules', () => {
  const daily = (missed?: string) => `name: daily
as: daily
rules:
  - id: tick
    on: { schedule: { cron: "0 9 * * *"${missed ? `, missed: ${missed}` : ''} } }
    do:
      - send_message: { to: "{{ vars.alice }}", content: "tick {{ event.scheduled_at }} missed={{ event.missed }} ({{ event.missed_count }})" }
`;
  /** Runs the bot a day, stops it for three, starts it again; returns what alice got. */
  async function downFor3Days(missed?: string): Promise<string[]> {
    const { createTestWorld } = await import('../../src/testing/world.js');
    const { rmSync, writeFileSync } = await import('node:fs');
    const world = await createTestWorld({ users: { alice: {}, daily: {} } });
    try {
      const text = daily(missed).replace('rules:', `vars: { alice: "${world.users.alice!.pin_code}" }\nrules:`);
      const { file } = await world.addBot(text);
      await world.advance('1d'); // 2026-01-02 09:00: one fire
      rmSync(file);
      await world.host.reload(); // the bot stops
      await world.advance('3d'); // 01-03, 01-04 and 01-05 at 09:00 pass unseen
      writeFileSync(file, text);
      await world.host.reload();
      await world.settle();
      return (await world.inbox('alice')).map((m) => m.content);
    } finally {
      await world.close();
    }
  }

  it('missed: once (default) — one event for the latest missed fire, with how many were missed', async () => {
    expect(await downFor3Days()).toEqual([
      'tick 2026-01-02T09:00:00.000Z missed=false (0)',
      'tick 2026-01-05T09:00:00.000Z missed=true (3)',
    ]);
  });

  it('missed: all — one event per missed fire, in order; missed: skip — none', async () => {
    expect(await downFor3Days('all')).toEqual([
      'tick 2026-01-02T09:00:00.000Z missed=false (0)',
      'tick 2026-01-03T09:00:00.000Z missed=true (1)',
      'tick 2026-01-04T09:00:00.000Z missed=true (1)',
      'tick 2026-01-05T09:00:00.000Z missed=true (1)',
    ]);
    expect(await downFor3Days('skip')).toEqual(['tick 2026-01-02T09:00:00.000Z missed=false (0)']);
  });
});
