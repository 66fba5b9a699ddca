import { afterEach, describe, expect, it } from 'vitest';
import { createTestWorld, type TestWorld } from '../../src/testing/world.js';
import { slowSource, testRegistry } from '../helpers/registry.js';

/**
 * When events are handled: each source's events as soon as it answers (a slow source holds no
 * one back), from the moment the bot starts (a first poll that waits loses nothing), and in the
 * server's time order across conversations.
 */

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const replies = async (name: string) => (await world!.inbox(name)).map((m) => m.content);

describe('delivery', () => {
  it('a source that is slow to answer does not delay the events of the others', async () => {
    const registry = testRegistry({
      sources: [slowSource('slowpoke', 30_000)],
      triggers: [{ name: 'slowpoke.thing', description: 'never happens', source: 'slowpoke', example: {} }],
    });
    world = await createTestWorld({ registry, users: { alice: {}, desk: {} } });
    await world.addBot(`name: desk
as: desk
poll: 1s
rules:
  - id: answer
    on: message.received
    do: [{ reply: "got {{ event.content }}" }]
  - id: never
    on: slowpoke.thing
    do: [{ log: never }]
`);
    await world.as('alice').send('desk', 'hi');
    // the bot's next poll asks both sources; the slow one answers 30 s later
    await world.advance('2s');
    expect(await replies('alice')).toEqual(['got hi']);
  });

  it('a message sent after the bot started is handled even when its first poll came later', async () => {
    // the first poll of the messages source waits 3 s (as a poll paced by the rate budget does)
    let first = true;
    const registry = testRegistry({
      swap: {
        messages: (s) => ({
          ...s,
          async poll(ctx, cursor) {
            if (first) {
              first = false;
              await ctx.clock.sleep(3000, ctx.signal, { parked: true });
            }
            return s.poll(ctx, cursor);
          },
        }),
      },
    });
    world = await createTestWorld({ registry, users: { alice: {}, desk: {} } });
    await world.as('alice').send('desk', 'before the bot');
    await world.addBot(
      `name: desk\nas: desk\nrules:\n  - on: message.received\n    do: [{ reply: "got {{ event.content }}" }]\n`,
    );
    await world.advance('1s');
    await world.as('alice').send('desk', 'after the start');
    await world.advance('10s');
    // what came before the start is history; what came after is an event, whenever it was found
    expect(await replies('alice')).toEqual(['got after the start']);
    expect(world.traces('desk').map((t) => t.event.summary)).toEqual([expect.stringContaining('"after the start"')]);
  });

  it('messages of several conversations found in one poll are handled oldest first', async () => {
    world = await createTestWorld({ users: { alice: {}, bob: {}, carol: {}, counter: {} } });
    await world.addBot(`name: counter
as: counter
poll: 1h
vars: { n: 0 }
rules:
  - id: count
    on: message.received
    do:
      - set: { n: "{{ vars.n | plus: 1 }}" }
      - reply: "{{ event.content }} is number {{ vars.n }}"
`);
    await world.as('alice').send('counter', 'first');
    await world.advance('1s');
    await world.as('bob').send('counter', 'second');
    await world.advance('1s');
    await world.as('carol').send('counter', 'third');
    await world.host.runner('counter')!.pollNow();
    expect([...(await replies('alice')), ...(await replies('bob')), ...(await replies('carol'))]).toEqual([
      'first is number 1',
      'second is number 2',
      'third is number 3',
    ]);
  });

  it('two bots acting as one user share one rate budget (the server counts the user, not the key)', async () => {
    world = await createTestWorld({ users: { desk: {} } });
    const bot = (name: string) =>
      `name: ${name}\nas: desk\nrules:\n  - on: message.received\n    do: [{ reply: "${name}" }]\n`;
    await world.addBot(bot('one'));
    await world.addBot(bot('two'));
    const budget = (name: string) => world!.host.runner(name)?.client?.http.budget;
    expect(budget('one')).toBeDefined();
    expect(budget('one')).toBe(budget('two'));
  });
});
