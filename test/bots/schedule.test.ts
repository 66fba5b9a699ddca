import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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
      `name: daily\nas: Daily\ncreate_user: true\nrules:\n  - on: { schedule: { cron: "0 9 * * *", timezone: Europe/Paris } }\n    do:\n      - send_message: { to: ${alice.user.pin_code}, content: "tick {{ event.at }} (clock {{ now }})" }\n`,
    );
    await w.host.start();
    await w.host.runner('daily')!.started;
    // T0 is Saturday 2026-11-21 12:00 UTC; 09:00 in Paris is 08:00 UTC in November
    await w.clock.advanceTo(Date.parse('2026-11-23T09:00:00Z'));
    const [conv] = (await alice.api.conversations.list()).conversations;
    const got = (await alice.api.conversations.messages(conv!.id)).messages.map((m) => m.content);
    expect(got).toEqual(['tick 2026-11-22T08:00:00.000Z (clock 2026-11-22T08:00:00.000Z)', 'tick 2026-11-23T08:00:00.000Z (clock 2026-11-23T08:00:00.000Z)']);
    expect(w.host.traces('daily')!.map((t) => [t.event.type, t.at])).toEqual([
      ['schedule', '2026-11-22T08:00:00.000Z'],
      ['schedule', '2026-11-23T08:00:00.000Z'],
    ]);
  });

  it('the reminder example: "remind me", then a message on weekday mornings only', async () => {
    w = await botWorld();
    w.writeBot('reminder.yaml', readFileSync(join(import.meta.dirname, '../../bots/reminder.yaml'), 'utf8'));
    await w.host.start();
    await w.host.runner('reminder')!.started;
    await w.poll('reminder');
    const alice = await w.user('Alice');
    const pin = w.botUser('reminder').pin_code;
    await w.clock.advanceTo(Date.parse('2026-11-23T09:00:00Z')); // nobody subscribed yet: the rule is traced, no message
    expect(w.host.traces('reminder')!.map((t) => [t.rule, t.outcome, t.reason])).toEqual([['remind', 'not_run', 'condition_false']]);
    await alice.api.messages.send({ recipient_pin: pin, content: 'Remind me please' });
    await w.poll('reminder');
    // Tuesday 24 to Friday 27 at 08:00 UTC; Saturday 28 and Sunday 29 are skipped
    await w.clock.advanceTo(Date.parse('2026-11-30T07:00:00Z'));
    const [conv] = (await alice.api.conversations.list()).conversations;
    const got = (await alice.api.conversations.messages(conv!.id)).messages.map((m) => `${m.sender.display_name}: ${m.content}`);
    expect(got).toEqual([
      'Alice: Remind me please',
      'Reminder: OK Alice, I will remind you every weekday at 09:00 (Paris time). Say stop to stop.',
      ...Array(4).fill('Reminder: Good morning! This is your 09:00 reminder.'),
    ]);
    await alice.api.messages.send({ recipient_pin: pin, content: 'stop' });
    await w.poll('reminder');
    await w.clock.advanceTo(Date.parse('2026-12-01T09:00:00Z'));
    const after = (await alice.api.conversations.messages(conv!.id)).messages.map((m) => m.content);
    expect(after.slice(-2)).toEqual(['stop', 'Done, no more reminders.']);
  });
});
