import { afterEach, expect, it } from 'vitest';
import { definePlugin } from 'pinbot/plugin';
import { createTestWorld, type TestWorld } from 'pinbot/testing';

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const counter = definePlugin({
  name: 'counter',
  version: '1.0.0',
  pinbot: '^0.1.0',
  actions: {
    bump: {
      schema: { type: 'object', properties: { by: { type: 'integer', default: 1 } } },
      async run(ctx, args) {
        const n = await ctx.state.update<number>(String(ctx.event.sender && (ctx.event.sender as { pin_code: string }).pin_code), (n = 0) => n + args.by);
        await ctx.reply(`count ${n}`);
        return { n };
      },
    },
  },
});

it('smoke', async () => {
  world = await createTestWorld({
    users: { alice: {}, bot: {} },
    plugins: [counter],
    bots: ['name: b\nas: bot\nrules:\n  - on: message.received\n    do:\n      - counter.bump: {}\n'],
  });
  await world.as('alice').send('bot', 'hi');
  await world.advance('5s');
  await world.as('alice').send('bot', 'hi');
  await world.advance('5s');
  expect((await world.inbox('alice')).map((m) => m.content)).toEqual(['count 1', 'count 2']);
  expect(await world.state('counter', 'b')).toEqual({ [world.users.alice!.pin_code]: 2 });
  console.log(world.plugins());
});
