import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin } from '../../src/plugin-api/define.js';
import { DialogEnded } from '../../src/plugin-api/index.js';
import { createTestWorld, type TestWorld } from '../../src/testing/world.js';

/** A plugin action that asks (ctx.ask): replayed from its start after each answer, effects once. */

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const calls = { stock: 0, runs: 0 };
let drift = 0;

const shop = definePlugin({
  name: 'shop',
  version: '1.0.0',
  pinbot: '>=0.1.0',
  actions: {
    order: {
      schema: { type: 'object' },
      async run(ctx) {
        calls.runs++;
        await ctx.reply('Welcome to the shop');
        // looked up once: a run again after an answer gets the recorded result
        const stock = await ctx.once('stock', () => {
          calls.stock++;
          return 7;
        });
        const size = await ctx.ask({
          question: 'What size? small or large',
          expect: { choice: ['small', 'large'] },
          retry: 'small or large, please',
          timeout: '10m',
        });
        // typed: 'small' | 'large'
        const big: boolean = size === 'large';
        const count = await ctx.ask({
          question: `How many ${size}?`,
          expect: { number: { min: 1, max: 9, integer: true } },
          timeout: '10m',
        });
        await ctx.reply(`Ordered ${count} ${size} (${stock - count} left${big ? ', big' : ''})`);
        return { size, count };
      },
    },
    polite: {
      schema: { type: 'object' },
      async run(ctx) {
        try {
          const ok: boolean = await ctx.ask({ question: 'Sure?', expect: 'yes_no', timeout: '5m', attempts: 1 });
          await ctx.reply(ok ? 'great' : 'fine');
        } catch (err) {
          if (!(err instanceof DialogEnded)) throw err;
          await ctx.reply(`ended: ${err.reason}`);
        }
      },
    },
    fickle: {
      schema: { type: 'object' },
      async run(ctx) {
        drift++;
        await ctx.ask({ question: `Question number ${drift}?` });
      },
    },
    greedy: {
      schema: { type: 'object' },
      async run(ctx) {
        try {
          await ctx.ask({ question: 'Name?' });
        } catch {
          // swallows everything, the suspension included
        }
        return { done: true };
      },
    },
  },
});

const BOT = `name: shop
as: shop
rules:
  - id: order
    on: message.received
    if: { content: { matches: "^order$" } }
    cancel_words: [stop]
    do: [ { shop.order: {} } ]
    on_timeout: [ { reply: "too slow" } ]
    on_cancel: [ { reply: "cancelled" } ]
  - id: polite
    on: message.received
    if: { content: { matches: "^polite$" } }
    do: [ { shop.polite: {} } ]
  - id: fickle
    on: message.received
    if: { content: { matches: "^fickle$" } }
    do: [ { shop.fickle: {} } ]
    on_error: [ { reply: "error {{ error.message }}" } ]
  - id: greedy
    on: message.received
    if: { content: { matches: "^greedy$" } }
    do: [ { shop.greedy: {} } ]
`;

const start = async () => {
  calls.stock = 0;
  calls.runs = 0;
  world = await createTestWorld({ users: { ann: {}, bob: {}, shop: {} }, plugins: [shop], bots: [BOT] });
  return world;
};
const heard = async (w: TestWorld, who: string) => (await w.inbox(who)).map((m) => m.content);
const say = async (w: TestWorld, who: string, text: string) => {
  await w.as(who).send('shop', text);
  await w.settle();
};

describe('ctx.ask', () => {
  it('asks, re-asks an invalid answer, replays with the recorded answers: every effect once', async () => {
    const w = await start();
    await say(w, 'ann', 'order');
    expect(w.dialogs('shop')).toMatchObject([{ name: 'ann', rule: 'order', step: 0 }]);
    await say(w, 'ann', 'medium');
    await say(w, 'ann', '2'); // the index of a choice counts: large
    await say(w, 'bob', 'order'); // another person's dialog is their own
    await say(w, 'ann', 'two');
    await say(w, 'ann', '3');
    expect(await heard(w, 'ann')).toEqual([
      'Welcome to the shop',
      'What size? small or large',
      'small or large, please',
      'How many large?',
      'How many large?',
      'Ordered 3 large (4 left, big)',
    ]);
    expect(calls.stock).toBe(2); // once per order (ann's and bob's), whatever the replays
    expect(calls.runs).toBeGreaterThanOrEqual(3);
    expect(w.dialogs('shop').map((d) => d.name)).toEqual(['bob']);
    const done = w.traces('shop').find((t) => t.rule === 'order' && t.outcome === 'done')!;
    expect(done.steps.map((s) => [s.action, s.status])).toEqual([
      ['ask', 'done'],
      ['ask', 'done'],
      ['shop.order', 'done'],
    ]);
    expect(done.steps[0]!.result).toMatchObject({ asked: 2, value: 'large' });
    expect(done.steps[2]!.result).toEqual({ size: 'large', count: 3 });
  });

  it('a timeout fires by itself on the virtual clock: uncaught, on_timeout runs', async () => {
    const w = await start();
    await say(w, 'ann', 'order');
    await w.advance('9m');
    expect(await heard(w, 'ann')).toEqual(['Welcome to the shop', 'What size? small or large']);
    await w.advance('2m');
    expect(await heard(w, 'ann')).toEqual(['Welcome to the shop', 'What size? small or large', 'too slow']);
    expect(w.dialogs('shop')).toEqual([]);
    const t = w.traces('shop').at(-1)!;
    expect(t).toMatchObject({ rule: 'order', reason: 'dialog_timeout' });
  });

  it('a cancel word runs on_cancel; a plugin that catches DialogEnded goes on', async () => {
    const w = await start();
    await say(w, 'ann', 'order');
    await say(w, 'ann', 'STOP');
    expect((await heard(w, 'ann')).at(-1)).toBe('cancelled');
    await say(w, 'bob', 'polite');
    await say(w, 'bob', 'perhaps'); // attempts: 1
    await say(w, 'bob', 'polite');
    await w.advance('6m');
    expect(await heard(w, 'bob')).toEqual(['Sure?', 'ended: invalid_answer', 'Sure?', 'ended: timeout']);
  });

  it('an answer sent twice: the step after it runs once, the second message is an ordinary one', async () => {
    const w = await start();
    await say(w, 'ann', 'order');
    await say(w, 'ann', 'small');
    await w.as('ann').send('shop', '2');
    await w.as('ann').send('shop', '2');
    await w.settle();
    await w.advance('1m');
    expect(await heard(w, 'ann')).toEqual([
      'Welcome to the shop',
      'What size? small or large',
      'How many small?',
      'Ordered 2 small (5 left)',
    ]);
    expect(w.dialogs('shop')).toEqual([]);
  });

  it('survives a restart while waiting: the answer continues with the earlier answers', async () => {
    const w = await start();
    await say(w, 'ann', 'order');
    await say(w, 'ann', 'large');
    await w.restart();
    expect(w.dialogs('shop')).toMatchObject([{ name: 'ann', rule: 'order' }]);
    await say(w, 'ann', '1');
    expect(await heard(w, 'ann')).toEqual([
      'Welcome to the shop',
      'What size? small or large',
      'How many large?',
      'Ordered 1 large (6 left, big)',
    ]);
  });

  it('an operator ends a plugin dialog like a YAML one', async () => {
    const w = await start();
    await say(w, 'ann', 'order');
    const ended = await w.host.runner('shop')!.endDialogs(w.users.ann!.pin_code);
    expect(ended).toHaveLength(1);
    expect(w.dialogs('shop')).toEqual([]);
    expect(w.traces('shop').at(-1)).toMatchObject({ rule: 'order', outcome: 'failed', reason: 'dialog_ended' });
    await say(w, 'ann', 'large'); // an ordinary message again
    expect(await heard(w, 'ann')).toEqual(['Welcome to the shop', 'What size? small or large']);
  });

  it('a new trigger by the same person while their dialog waits follows the mode: skipped (in_dialog)', async () => {
    const w = await start();
    await say(w, 'ann', 'order');
    const group = await w.users.ann!.api.conversations.create({
      name: 'team',
      participant_pins: [w.users.bob!.pin_code, w.users.shop!.pin_code],
    });
    await w.users.ann!.api.conversations.send(group.id, { content: 'order' });
    await w.settle();
    expect(w.traces('shop').at(-1)).toMatchObject({ rule: 'order', outcome: 'not_run', reason: 'in_dialog' });
    expect(w.dialogs('shop')).toHaveLength(1);
  });

  it('a replay that asks another question is refused, loudly', async () => {
    const w = await start();
    await say(w, 'ann', 'fickle');
    await say(w, 'ann', 'anything');
    const t = w.traces('shop').at(-1)!;
    expect(t).toMatchObject({ rule: 'fickle', outcome: 'failed', reason: 'plugin_failed' });
    expect(t.message).toMatch(
      /call 1 asks "Question number 2\?", but when the action first ran it asked "Question number 1\?"/,
    );
    expect((await heard(w, 'ann')).at(-1)).toMatch(/^error .*must ask the same questions/);
  });

  it('an action that swallows the suspension fails, naming why', async () => {
    const w = await start();
    await say(w, 'ann', 'greedy');
    const t = w.traces('shop').at(-1)!;
    expect(t).toMatchObject({ rule: 'greedy', outcome: 'failed' });
    expect(t.message).toMatch(/ctx\.ask \(call 1\) was waiting for its answer, but the action returned/);
    expect(w.dialogs('shop')).toEqual([]);
  });
});
