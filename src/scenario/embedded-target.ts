import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pino } from 'pino';
import { subscribe, Subscriptions } from '../domain/wallet/subscription.js';
import { seededSource } from '../util/random.js';
import { createTestWorld, type TestWorld } from '../testing/world.js';
import { fillUserRefs } from './bot-vars.js';
import { CoverageCollector } from './coverage/collect.js';
import { storeEvents, type EventKind, type ScenarioEvent } from './events.js';
import { keyVariable } from './http.js';
import type { LoadedScenario } from './load.js';
import { registryFor } from './plugins.js';
import type { Trace } from '../runtime/index.js';
import type { BotRunNote, Target, TargetUser } from './types.js';

/**
 * A scenario's own embedded server: a test world (real HTTP on a free port, a file store in a
 * temp directory, UBI, bots) on its own virtual clock, with the scenario's users set up.
 * Adds what scenarios need beyond the test kit: `subscribed_days`, a restart on the same
 * data directory, and events read from the store (reading spends no one's rate limit).
 */
export async function embeddedTarget(sc: LoadedScenario, o: { coverage?: boolean } = {}): Promise<Target> {
  const coverage = o.coverage ? new CoverageCollector() : undefined;
  const registry = await registryFor(sc.plugins, sc.config);
  const log = pino({ level: 'silent' });
  const world: TestWorld = await createTestWorld({
    start: sc.start,
    config: sc.config,
    registry,
    log,
    users: nullProto(Object.entries(sc.users).map(([n, u]) => [n, { balance: u.balance, contacts: u.contacts }])),
    ...(coverage ? { hostOptions: { onTrace: (t) => coverage.trace(t) } } : {}),
  });
  coverage?.attach(world.server.http, world.server.inProcess);
  const clock = world.clock;
  // a seeded run's ids carry the scenario's time (util/random.ts)
  const seeded = seededSource();
  if (seeded) seeded.now = () => clock.now();
  // Commits touch the clock: counting them tells an event search when to look again.
  let changes = 0;
  clock.onTouch(() => changes++);
  const users = nullProto<TargetUser>([]);
  const names = new Map<string, string>();
  for (const [name, u] of Object.entries(world.users)) {
    Object.defineProperty(users, name, {
      value: { name, id: u.id, pin_code: u.pin_code, display_name: u.display_name, api_key: u.api_key },
      enumerable: true,
      configurable: true,
    });
    names.set(u.id, name);
  }
  try {
    const subs = Object.entries(sc.users).filter(([, u]) => u.subscribed_days !== undefined);
    if (subs.length) {
      // exactly N days from the start: the trial is replaced by a period the operator grants
      await world.server.store.transaction((tx) => {
        for (const [name, u] of subs) {
          tx.col(Subscriptions).delete(users[name]!.id);
          if (u.subscribed_days! > 0) subscribe(tx, world.server.env, users[name]!.id, u.subscribed_days!);
        }
      });
    }
    for (const bot of sc.bots) await world.addBot(fillUserRefs(bot.text, users));
    await clock.settle();
  } catch (err) {
    await world.close();
    throw err;
  }

  let seen = -1;
  const cache = new Map<EventKind, ScenarioEvent[]>();
  const target: Target = {
    mode: 'embedded',
    get baseUrl() {
      return world.url;
    },
    users,
    now: () => clock.now(),
    wait: (ms) => clock.advance(ms),
    async stepToward(deadline) {
      const before = changes;
      const next = clock.pending().find((t) => t > clock.now());
      await clock.advanceTo(next === undefined ? deadline : Math.min(next, deadline));
      return changes !== before;
    },
    settle: () => clock.settle(),
    advanceTo: (ms) => clock.advanceTo(ms),
    // the world restarts its server on the same data directory and clock, and its bots
    async restart() {
      await world.restart();
      coverage?.attach(world.server.http, world.server.inProcess);
    },
    async events(kind) {
      if (seen !== changes) cache.clear();
      seen = changes;
      let evs = cache.get(kind);
      if (!evs) cache.set(kind, (evs = storeEvents(world.server.store.read, kind, names)));
      return evs;
    },
    keep() {
      // keys stay out of reports: the curl lines read them from these variables
      const keys = join(dirname(world.dataDir), 'keys.sh');
      const lines = Object.values(users).map((u) => `export ${keyVariable(u.name)}='${u.api_key}'`);
      writeFileSync(keys, `${lines.join('\n')}\n`, { mode: 0o600 });
      return {
        url: world.url,
        dataDir: world.dataDir,
        keys,
        bots: world.host.status().flatMap((b) => (b.name ? [b.name] : [])),
      };
    },
    botRuns(since) {
      const notes: BotRunNote[] = [];
      for (const { name } of world.host.status()) {
        for (const t of name ? world.traces(name) : []) {
          if (t.outcome !== 'done' && t.outcome !== 'dry_run' && Date.parse(t.at) >= since)
            notes.push(runNote(name!, t));
        }
      }
      return notes;
    },
    close: () => world.close(),
    ...(coverage ? { coverage: () => coverage.result() } : {}),
  };
  return target;
}

/**
 * A record by user name without a prototype, its entries defined (not assigned): users named
 * `constructor`, `toString` or `__proto__` are entries like any other. Internal.
 */
function nullProto<T>(entries: ReadonlyArray<readonly [string, T]>): Record<string, T> {
  const out = Object.create(null) as Record<string, T>;
  for (const [k, v] of entries)
    Object.defineProperty(out, k, { value: v, enumerable: true, configurable: true, writable: true });
  return out;
}

/** A failed or not-run trace as one line: the rule, the event, the reason, and the failed step. Internal. */
function runNote(bot: string, t: Trace): BotRunNote {
  const step = t.steps.find((st) => st.status === 'failed');
  const why = [t.reason ?? t.outcome, t.message ?? (step ? `${step.action}: ${step.error}` : undefined)]
    .filter(Boolean)
    .join(' — ');
  const what = t.outcome === 'not_run' ? 'did not run' : t.outcome === 'failed' ? 'failed' : `stopped (${t.outcome})`;
  const failedStep =
    step && t.message && !t.message.includes(step.error ?? '') ? ` (step ${step.action}: ${step.error})` : '';
  const line = `  bot ${bot} › ${t.rule} ${what} for ${t.event.summary}: ${why}${failedStep}`;
  return { bot, reason: t.reason ?? t.outcome, line };
}
