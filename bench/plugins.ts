import { pino } from 'pino';
import { definePlugin } from '../src/plugin-api/define.js';
import { createTestWorld, type TestWorld } from '../src/testing/world.js';
import type { ActionRunContext } from '../src/runtime/contract/types.js';
import { defineBench } from './harness/bench.js';
import { median, type Figure } from './harness/figure.js';

/** Events each bot handles per round. */
const EVENTS = 200;
/** Calls per round of the boundary alone. */
const CALLS = 20_000;

/** The built-in `reply`, and the same through a plugin. */
const bench = definePlugin({
  name: 'bench',
  version: '1.0.0',
  pinbot: '>=0.1.0',
  actions: {
    reply: { schema: { type: 'string' }, run: (ctx, text) => ctx.reply(text) },
    noop: { schema: { type: 'object' }, effect: 'local', run: () => ({ ok: true }) },
  },
});

const bot = (name: string, step: string) =>
  `name: ${name}\nas: ${name}\npoll: 1h\ntraces: 1000\nrules:\n  - on: message.received\n    do:\n      - ${step}\n`;

/**
 * CPU time (µs, this process: server and bots) for one bot to handle EVENTS messages, sent
 * first, then one poll. CPU time, not wall time: the store's fsyncs and other work on the
 * machine move wall time far more than the few µs measured here. Internal.
 */
async function perEvent(world: TestWorld, name: string, round: number): Promise<number> {
  const alice = world.users.alice!;
  const pin = world.users[name]!.pin_code;
  await Promise.all(
    Array.from({ length: EVENTS }, (_, i) =>
      alice.api.messages.send({ recipient_pin: pin, content: `r${round} m${i}` }),
    ),
  );
  const c0 = process.cpuUsage();
  await world.host.runner(name)!.pollNow();
  const c = process.cpuUsage(c0);
  const last = world.traces(name).slice(-EVENTS);
  if (last.length !== EVENTS || last.some((t) => t.outcome !== 'done' || !t.event.summary.includes(`r${round} `)))
    throw new Error(`${name}: the ${EVENTS} events of round ${round} were not all handled`);
  return (c.user + c.system) / EVENTS;
}

/** µs per call of an action's run, the boundary included for the plugin's. Internal. */
async function perCall(
  run: (args: unknown, ctx: ActionRunContext) => Promise<unknown>,
  ctx: ActionRunContext,
): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < CALLS; i++) await run({}, ctx);
  return ((performance.now() - t0) * 1000) / CALLS;
}

/**
 * plugins: what a plugin action costs against the same built-in action. Row 1: a bot whose rule
 * replies with the built-in `reply` and one replying through a plugin action (`ctx.reply`),
 * each handling 200 messages per round through the whole engine (poll, decision, write-ahead,
 * the HTTP reply, trace) on an in-process server: CPU µs per event, and the median of the
 * per-round ratios (same run, order alternated). Row 2: the boundary alone — a plugin no-op action's `run`
 * against a plain function doing the same, called 20,000 times.
 */
export default defineBench({
  name: 'plugins',
  summary: 'plugin action vs the same built-in action: µs per call, ratio (target ≤ 1.05×)',
  async run(ctx) {
    const world = await createTestWorld({
      users: { alice: {}, builtin: {}, viaplugin: {} },
      config: { rate_limits: { enabled: false } },
      plugins: [bench],
      log: pino({ level: 'silent' }),
    });
    try {
      await world.addBot(bot('builtin', 'reply: pong'));
      await world.addBot(bot('viaplugin', 'bench.reply: pong'));
      const builtin: number[] = [];
      const plugin: number[] = [];
      const ratios: number[] = [];
      await perEvent(world, 'builtin', 1); // warm-up, not counted
      await perEvent(world, 'viaplugin', 1);
      for (let r = 2; r <= ctx.rounds + 1; r++) {
        const t: Record<string, number> = {};
        for (const name of r % 2 ? ['viaplugin', 'builtin'] : ['builtin', 'viaplugin'])
          t[name] = await perEvent(world, name, r);
        builtin.push(t.builtin!);
        plugin.push(t.viaplugin!);
        ratios.push(t.viaplugin! / t.builtin!);
        ctx.progress(
          `  plugins round ${r - 1}: built-in reply ${t.builtin!.toFixed(0)} CPU ` +
            `µs/event, plugin ${t.viaplugin!.toFixed(0)} CPU µs/event`,
        );
      }
      const ratio = median(ratios);
      const noop = world.server.registry.actions.get('bench.noop')!;
      const fake = {
        signal: new AbortController().signal,
        log: pino({ level: 'silent' }),
        clock: world.clock,
        scope: { event: {}, me: {}, vars: {} },
        bot: 'b',
        rule: 'r',
        store: world.server.store,
        idempotencyKey: 'k',
      } as unknown as ActionRunContext;
      const bare = async () => ({ ok: true });
      // what a plugin entry adds to a call: checking the arguments, the context, the boundary, the result
      const viaPlugin = (args: unknown, c: ActionRunContext) =>
        noop.run(noop.prepare ? noop.prepare(args, c) : args, c);
      const boundary: number[] = [];
      await perCall(viaPlugin, fake);
      for (let r = 0; r < ctx.rounds; r++)
        boundary.push((await perCall(viaPlugin, fake)) - (await perCall(bare, fake)));
      const share = median(boundary) / median(builtin);
      const rows: Figure[] = [
        {
          bench: 'plugins',
          name: 'plugin action vs built-in (reply, per event through the engine)',
          ratio,
          baseline: 'built-in reply, same run',
          value:
            `plugin ${median(plugin).toFixed(0)} CPU µs/event, built-in ` +
            `${median(builtin).toFixed(0)} CPU µs/event`,
          note:
            `${EVENTS} events a round; per-round ratios ` +
            `${ratios.map((x) => x.toFixed(2)).join(', ')} (their spread is the ` +
            `machine's; the row below is the overhead itself)`,
        },
        {
          bench: 'plugins',
          name: 'plugin overhead per call (args check, context, boundary, result)',
          target: '≤ 5% of the action',
          pass: share <= 0.05,
          value:
            `${median(boundary).toFixed(2)} CPU µs per call = ` +
            `${(share * 100).toFixed(2)}% of a built-in reply ` +
            `(${median(builtin).toFixed(0)} µs)`,
          note: `a no-op plugin action against a plain function, ${CALLS.toLocaleString('en-US')} calls a round`,
        },
      ];
      return rows;
    } finally {
      await world.close();
    }
  },
});
