import { afterEach, describe, expect, it } from 'vitest';
import { createTestWorld, type TestWorld } from '../../src/testing/world.js';

/** Run modes and the limits on how often a rule runs. */

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const replies = async (name: string) => (await world!.inbox(name)).map((m) => m.content);
const outcomes = (bot: string) => world!.traces(bot).map((t) => `${t.event.summary.match(/"(.*)"/)?.[1]}: ${t.outcome}${t.reason ? ` ${t.reason}` : ''}`);

describe('mode single', () => {
  it('an event its conditions reject does not count as a run going on', async () => {
    world = await createTestWorld({ users: { alice: {}, desk: {} } });
    await world.addBot(`name: desk
as: desk
poll: 1h
rules:
  - id: slow
    mode: single
    on: message.received
    if: { content: { matches: "^slow" } }
    do:
      - wait: 1m
      - reply: "done {{ event.content }}"
`);
    await world.as('alice').send('desk', 'unrelated');
    await world.as('alice').send('desk', 'slow c');
    await world.as('alice').send('desk', 'slow d');
    await world.host.runner('desk')!.pollNow();
    await world.advance('2m');
    expect(await replies('alice')).toEqual(['done slow c']);
    expect(outcomes('desk').sort()).toEqual(['slow c: done', 'slow d: not_run single_running', 'unrelated: not_run condition_false']);
  });
});
