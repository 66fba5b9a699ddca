import { afterEach, describe, expect, it } from 'vitest';
import { formatBotLine } from '../../src/cli/bots-commands.js';
import { createTestWorld, type TestWorld } from '../../src/testing/world.js';

/** `pinbot bots list`: each bot's state, and why; a trace that shows what a condition saw. */

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('bots list and traces', () => {
  it('running (with its last poll and run), waiting for its user, failed and why', async () => {
    world = await createTestWorld({ users: { alice: {}, desk: {} } });
    await world.addBot(`name: desk\nas: desk\nrules:\n  - on: message.received\n    do: [{ reply: hi }]\n`);
    await world.addBot(`name: ghost\nas: Nobody Yet\nrules:\n  - on: message.received\n    do: [{ reply: hi }]\n`);
    await world.addBot(
      `name: locked\nkey: pinbot_not_a_real_key_0000000000000000\nrules:\n  - on: ` +
        `message.received\n    do: [{ reply: hi }]\n`,
    );
    await world.as('alice').send('desk', 'hello');
    await world.settle();
    const byName = Object.fromEntries(world.host.status().map((b) => [b.name, b]));
    expect(byName.desk).toMatchObject({
      status: 'running',
      last_poll: '2026-01-01T09:00:00.000Z',
      last_run: '2026-01-01T09:00:00.000Z',
    });
    expect(byName.ghost).toMatchObject({
      status: 'waiting',
      message: expect.stringContaining('no user "Nobody Yet" on this server'),
    });
    expect(byName.locked).toMatchObject({
      status: 'failed',
      message: expect.stringContaining('the server refused the API key (401)'),
    });
    expect(formatBotLine(byName.desk!)).toMatch(
      new RegExp(
        String.raw`^desk +running +as desk \([A-Z0-9]{6}\)  last poll 2026-01-01 ` +
          String.raw`09:00:00Z, last run 2026-01-01 09:00:00Z  \S+bot-1\.yaml$`,
      ),
    );
    expect(formatBotLine(byName.ghost!)).toMatch(/^ghost +waiting +no user "Nobody Yet"/);
  });

  it('a liquid: condition that did not hold shows the values it saw', async () => {
    world = await createTestWorld({ users: { alice: { balance: 10 }, jar: {} } });
    await world.addBot(
      `name: jar\nas: jar\nvars: { threshold: 10 }\nrules:\n  - id: big\n    on: ` +
        `transfer.received\n    if: { liquid: "event.amount > vars.threshold" }\n    ` +
        `do: [accept]\n`,
    );
    await world.as('alice').pay('jar', 5);
    await world.settle();
    const [t] = world.traces('jar');
    expect(t).toMatchObject({ outcome: 'not_run', reason: 'condition_false' });
    expect(t!.conditions!.detail).toBe('event.amount = 5, vars.threshold = 10 → false');
  });
  it('pause holds a bot: its events wait, listed as paused, and are handled after resume', async () => {
    world = await createTestWorld({ users: { alice: {}, desk: {} } });
    await world.addBot(
      `name: desk\nas: desk\nrules:\n  - on: message.received\n    do: [{ reply: "hi {{ event.content }}" }]\n`,
    );
    await world.settle();
    expect(await world.host.pause('desk')).toBe(true);
    expect(await world.host.pause('desk')).toBe(false); // already paused
    await world.as('alice').send('desk', 'one');
    await world.advance('1h');
    expect(world.host.status().find((b) => b.name === 'desk')).toMatchObject({ status: 'paused' });
    expect((await world.inbox('alice')).map((m) => m.content)).toEqual([]);
    expect(await world.host.resume('desk')).toBe(true);
    await world.settle();
    expect((await world.inbox('alice')).map((m) => m.content)).toEqual(['hi one']);
    expect(world.host.status().find((b) => b.name === 'desk')).toMatchObject({ status: 'running' });
  });
});
