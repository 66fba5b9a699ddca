import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { createTestWorld, type TestWorld } from '../src/testing/world.js';
import { defineBench } from './harness/bench.js';
import { pct } from './harness/bots-kit.js';
import { median, type Figure } from './harness/figure.js';

/** People in a dialog with the bot at once. */
const PEOPLE = 1000;
/** Answers timed per round (one at a time, the others waiting). */
const ANSWERS = 100;

const BOT = `name: shop
as: shop
poll: 1h
traces: 20
rules:
  - id: order
    on: message.received
    if: { content: { matches: "^order$" } }
    do:
      - ask: { question: "What size?", save: size, expect: { choice: [small, large] } }
      - ask: { question: "How many?", save: count, expect: number }
      - reply: "Ordered {{ answers.count }} {{ answers.size }}"
  - id: ping
    on: message.received
    if: { content: { matches: "^ping$" } }
    do: [ { reply: pong } ]
`;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Heap in use after a full collection, in bytes. Internal. */
function heap(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

/** Every person sends `text` to the shop; resolves when the bot has handled all of it. Internal. */
async function everyone(world: TestWorld, text: string): Promise<void> {
  const names = Array.from({ length: PEOPLE }, (_, i) => `p${i}`);
  for (let i = 0; i < names.length; i += 50)
    await Promise.all(names.slice(i, i + 50).map((n) => world.as(n).send('shop', text)));
  await world.host.runner('shop')!.pollNow();
  await world.settle();
}

const runner = (world: TestWorld) => world.host.runner('shop')!;

/** Waits until every person is in a dialog (on a loaded machine a poll may still be on its way). */
async function allWaiting(world: TestWorld): Promise<void> {
  for (let k = 0; k < 10 && runner(world).dialogs().length < PEOPLE; k++) {
    await runner(world).pollNow();
    await world.settle();
  }
  const waiting = runner(world).dialogs().length;
  if (waiting !== PEOPLE) throw new Error(`${waiting} of ${PEOPLE} people are in a dialog`);
}

/**
 * dialogs: 1,000 people in a dialog (`ask`) with one bot at once, embedded, on a virtual clock.
 * Row 1: heap per waiting dialog — the heap after 1,000 people said "order" and got the
 * question, less the heap once those 1,000 dialogs were ended (the messages stay), over 1,000;
 * the note gives the old cross-check too (the growth of the "order" round less that of a "ping"
 * round: the same messages and replies without a dialog). Row 2: the latency of an
 * answer while the others wait — from sending it to the bot's next question written (send,
 * then settle), one answer at a time.
 */
export default defineBench({
  name: 'dialogs',
  summary:
    '1,000 people in dialogs with one bot: heap per waiting dialog, answer latency ' +
    'p50/p99 (targets ≤ 2 KB, p50 ≤ 25 ms)',
  async run(ctx) {
    const perDialog: number[] = [];
    const vsPing: number[] = [];
    const latencies: number[] = [];
    for (let r = 0; r < ctx.rounds; r++) {
      const users = Object.fromEntries([...Array.from({ length: PEOPLE }, (_, i) => [`p${i}`, {}]), ['shop', {}]]);
      const world = await createTestWorld({
        users,
        config: { rate_limits: { enabled: false } },
        log: pino({ level: 'silent' }),
      });
      try {
        await world.addBot(BOT);
        await world.advance('1s');
        await everyone(world, 'ping'); // warm-up: the first round also fills caches
        const h0 = heap();
        await everyone(world, 'ping');
        const h1 = heap();
        await everyone(world, 'order');
        await allWaiting(world);
        const h2 = heap();
        // the "ping" round made as many messages and replies: what the "order" round grew more
        // is the dialogs' (a cross-check: arrays and maps grown by doubling make it noisy)
        vsPing.push((h2 - h1 - (h1 - h0)) / PEOPLE);
        // what the 1,000 waiting dialogs hold: the heap they free when they end (an operator's
        // end: record, parked run, timer go; the messages stay)
        for (let i = 0; i < PEOPLE; i++) await runner(world).endDialogs(world.users[`p${i}`]!.pin_code);
        await world.settle();
        if (runner(world).dialogs().length !== 0) throw new Error('dialogs left after ending them all');
        perDialog.push((h2 - heap()) / PEOPLE);
        await everyone(world, 'order'); // and they wait again, for the answers timed below
        await allWaiting(world);
        const shop = world.users.shop!.pin_code;
        for (let i = 0; i < ANSWERS; i++) {
          const t0 = performance.now();
          await world.as(`p${i}`).send(shop, i % 2 ? 'small' : 'large');
          await world.settle();
          latencies.push(performance.now() - t0);
        }
        const left = world.host.runner('shop')!.dialogs().length;
        if (left !== PEOPLE)
          throw new Error(`after ${ANSWERS} answers ${left} dialogs wait (the answered go on to the second question)`);
        ctx.progress(
          `  dialogs round ${r + 1}: ${(perDialog.at(-1)! / 1024).toFixed(2)} KB per ` +
            `waiting dialog (${(vsPing.at(-1)! / 1024).toFixed(2)} KB against ping); answers ` +
            `p50 ${pct(latencies.slice(-ANSWERS), 50).toFixed(1)} ms, ` +
            `p99 ${pct(latencies.slice(-ANSWERS), 99).toFixed(1)} ms`,
        );
      } finally {
        await world.close();
      }
    }
    const kb = median(perDialog) / 1024;
    const p50 = pct(latencies, 50);
    const p99 = pct(latencies, 99);
    const rows: Figure[] = [
      {
        bench: 'dialogs',
        name: `heap per waiting dialog (${PEOPLE.toLocaleString('en-US')} people at once, embedded)`,
        target: '≤ 2 KB',
        pass: kb <= 2,
        value: `${kb.toFixed(2)} KB per dialog (rounds: ${perDialog.map((b) => (b / 1024).toFixed(2)).join(', ')})`,
        note:
          'heap with 1,000 people waiting for their answer, less the heap once those ' +
          'dialogs ended (record, parked run and timer freed; the messages stay), after a ' +
          'full GC; cross-check, growth of the order round less that of a ping round ' +
          `(a reply, no dialog): ${(median(vsPing) / 1024).toFixed(2)} KB (noisier: ` +
          'arrays and maps grown by doubling)',
      },
      {
        bench: 'dialogs',
        name:
          `answer latency with ${PEOPLE.toLocaleString('en-US')} dialogs waiting ` +
          `(embedded, send → next question written)`,
        target: 'p50 ≤ 25 ms',
        pass: p50 <= 25,
        p50,
        p99,
        note: `${ANSWERS} answers a round, one at a time; the file store fsyncs each write`,
      },
    ];
    return rows;
  },
});
