import { describe, expect, it } from 'vitest';
import { createTestWorld } from '../../src/testing/world.js';

/**
 * `advance` returns only when the work it woke has settled: the line after it sees every effect
 * of every timer that fell due, with no polling and no sleeps in the test.
 */

const DAY = 86_400_000;
const bot = `name: daily
as: jar
poll: 5s
rules:
  - id: tick
    on: { schedule: "0 12 * * *" }
    do:
      - wait: 1d
      - send_message: { to: "{{ vars.alice }}", content: "tick {{ event.at }}" }
  - id: later
    on: message.received
    do:
      - wait: 1d
      - reply: "later {{ event.content }}"
`;

async function thirtyDays(): Promise<void> {
  const world = await createTestWorld({
    start: '2026-01-01T09:00:00Z',
    config: { rate_limits: { enabled: false } },
    users: { alice: {}, jar: {} },
  });
  try {
    await world.addBot(bot.replace('rules:', `vars: { alice: "${world.users.alice!.pin_code}" }\nrules:`));
    await world.as('alice').send('jar', 'hi');
    await world.advance('30d');
    // at 2026-01-31T09:00: ticks of Jan 1…29 at 12:00 have waited their day and sent; the one
    // of Jan 30 waits until Jan 31 12:00. "later hi" went out on Jan 2 at 09:00:05.
    expect(world.clock.now()).toBe(Date.parse('2026-01-31T09:00:00Z'));
    expect(world.clock.busy()).toEqual([]);
    const inbox = (await world.inbox('alice')).map((m) => m.content);
    expect(inbox).toHaveLength(30);
    // "hi" was seen at the bot's first poll after it (09:00:05), answered a day later
    expect(inbox.slice(0, 2)).toEqual(['later hi', 'tick 2026-01-01T12:00:00.000Z']);
    expect(inbox.at(-1)).toBe('tick 2026-01-29T12:00:00.000Z');
    const done = world.traces('daily').filter((t) => t.outcome === 'done');
    expect(done).toHaveLength(30);
    // each tick was sent exactly one day after its schedule fired: at its own virtual time
    const sent = (await world.inbox('alice')).filter((m) => m.content.startsWith('tick '));
    for (const m of sent) expect(m.timestamp - Date.parse(m.content.slice(5))).toBe(DAY);
    // UBI fired at each midnight on the way: 30 credits for alice (Jan 2 … Jan 31)
    expect((await world.transfers('alice')).filter((t) => t.type === 'ubi')).toHaveLength(30);
    // one more day: the last tick goes out, nothing else is left running
    await world.advance('1d');
    expect((await world.inbox('alice')).map((m) => m.content)).toContain('tick 2026-01-30T12:00:00.000Z');
  } finally {
    await world.close();
  }
}

describe('the virtual clock settles before advance returns', () => {
  it('30 days with a bot that waits 1d in a rule and a daily schedule, 50 times in a row', async () => {
    for (let i = 0; i < 50; i++) await thirtyDays();
  }, 180_000);
});
