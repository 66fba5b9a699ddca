import { afterEach, describe, expect, it } from 'vitest';
import { createTestWorld, type TestWorld } from 'pinbot/testing';
import pizza from './pizza.js';

const BOT = `name: pizza
as: pizzeria
rules:
  - id: order
    on: message.received
    if: { content: { matches: "^order$", flags: i } }
    do: [ { pizza.order: {} } ]
    on_timeout: [ { reply: "No answer for 10 minutes: order dropped." } ]
    on_cancel: [ { reply: "Order cancelled." } ]
`;

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const heard = async (w: TestWorld, who: string) => (await w.inbox(who)).map((m) => m.content);

describe('pizza', () => {
  it('takes an order in three questions, re-asks a wrong size, remembers the usual', { timeout: 30_000 }, async () => {
    world = await createTestWorld({ users: { ann: {}, pizzeria: {} }, plugins: [pizza], bots: [BOT] });
    for (const text of ['order', 'huge', 'large', '2', 'yes']) {
      await world.as('ann').send('pizzeria', text);
      await world.settle();
    }
    expect(await heard(world, 'ann')).toEqual([
      'What size? small, medium, large',
      'Please answer small, medium, large',
      'How many large?',
      'Confirm 2 large? yes or no',
      'Ordered 2 large.',
    ]);
    expect(await world.memory('pizza', 'ann')).toEqual({ usual: 'large' });
    await world.as('ann').send('pizzeria', 'order');
    await world.settle();
    expect((await heard(world, 'ann')).at(-1)).toBe('What size? small, medium, large (your usual: large)');
  });

  it('a timeout fires by itself; a cancel word cancels', { timeout: 30_000 }, async () => {
    world = await createTestWorld({ users: { ann: {}, bob: {}, pizzeria: {} }, plugins: [pizza], bots: [BOT] });
    await world.as('ann').send('pizzeria', 'order');
    await world.as('bob').send('pizzeria', 'order');
    await world.settle();
    expect(
      world
        .dialogs('pizza')
        .map((d) => d.name)
        .sort(),
    ).toEqual(['ann', 'bob']);
    await world.as('bob').send('pizzeria', 'cancel');
    await world.advance('11m'); // nobody writes: ann's timeout fires by itself
    expect((await heard(world, 'ann')).at(-1)).toBe('No answer for 10 minutes: order dropped.');
    expect((await heard(world, 'bob')).at(-1)).toBe('Order cancelled.');
    expect(world.dialogs('pizza')).toEqual([]);
  });
});
