import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin } from '../../src/plugin-api/define.js';
import { createTestWorld, type TestWorld } from '../../src/testing/world.js';

/** A plugin action after `ask` steps reads the answers (`ctx.answers`); the test kit lists and times out dialogs. */

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const signup = definePlugin({
  name: 'signup',
  version: '1.0.0',
  pinbot: '>=0.1.0',
  actions: {
    save: {
      schema: { type: 'object' },
      async run(ctx) {
        const { name, age } = ctx.answers as { name?: string; age?: number };
        await ctx.state.set(String(ctx.event.sender && (ctx.event.sender as { pin_code: string }).pin_code), {
          name,
          age,
        });
        await ctx.reply(`welcome ${name} (${age})`);
      },
    },
  },
});

const BOT = `name: desk
as: desk
rules:
  - id: join
    on: message.received
    if: { content: { matches: "^join$" } }
    do:
      - ask: { question: "Your name?", save: name, timeout: 5m }
      - ask: { question: "Your age?", save: age, expect: { number: { min: 1, max: 150, integer: true } }, timeout: 5m }
      - signup.save: {}
    on_timeout: [ { reply: "too slow" } ]
`;

describe('dialogs and plugins', () => {
  it('a plugin action after the questions reads ctx.answers; world.dialogs lists who waits', async () => {
    world = await createTestWorld({ users: { alice: {}, bob: {}, desk: {} }, plugins: [signup] });
    await world.addBot(BOT);
    await world.as('alice').send('desk', 'join');
    await world.as('bob').send('desk', 'join');
    await world.settle();
    expect(
      world
        .dialogs('desk')
        .map((d) => [d.name, d.rule, d.step])
        .sort(),
    ).toEqual([
      ['alice', 'join', 0],
      ['bob', 'join', 0],
    ]);
    await world.as('alice').send('desk', 'Alice A.');
    await world.settle();
    await world.as('alice').send('desk', '42');
    await world.settle();
    expect((await world.inbox('alice')).map((m) => m.content)).toEqual([
      'Your name?',
      'Your age?',
      'welcome Alice A. (42)',
    ]);
    expect(await world.state('signup', 'desk')).toEqual({
      [world.users.alice!.pin_code]: { name: 'Alice A.', age: 42 },
    });
    // bob never answers: the test kit moves the clock past his timeout
    expect(world.dialogs('desk').map((d) => d.name)).toEqual(['bob']);
    await world.advance('6m');
    expect((await world.inbox('bob')).map((m) => m.content)).toEqual(['Your name?', 'too slow']);
    expect(world.dialogs('desk')).toEqual([]);
  });
});
