import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pino } from 'pino';
import { configFrom } from '../config/load.js';
import { subscribe, Subscriptions } from '../domain/wallet/subscription.js';
import { BotHost } from '../runtime/host.js';
import { startServer, type RunningServer } from '../server.js';
import { embeddedHostDeps } from '../services/embedded-identity.js';
import { pluginsService } from '../services/plugins.js';
import { ubiService } from '../services/ubi.js';
import { createTestWorld, type TestWorld } from '../testing/world.js';
import { parseDuration } from '../util/duration.js';
import { storeEvents, type EventKind, type ScenarioEvent } from './events.js';
import type { LoadedScenario } from './load.js';
import { registryFor } from './plugins.js';
import type { Target, TargetUser } from './types.js';

/**
 * A scenario's own embedded server: a test world (real HTTP on a free port, a file store in a
 * temp directory, UBI, bots) on its own virtual clock, with the scenario's users set up.
 * Adds what scenarios need beyond the test kit: `subscribed_days`, a restart on the same
 * data directory, and events read from the store (reading spends no one's rate limit).
 */
export async function embeddedTarget(sc: LoadedScenario): Promise<Target> {
  const registry = await registryFor(sc.plugins, sc.config);
  const log = pino({ level: 'silent' });
  const world: TestWorld = await createTestWorld({
    start: sc.start,
    config: sc.config,
    registry,
    log,
    users: Object.fromEntries(Object.entries(sc.users).map(([n, u]) => [n, { balance: u.balance, contacts: u.contacts }])),
  });
  const config = configFrom(sc.config);
  const clock = world.clock;
  let server: RunningServer = world.server;
  let host: BotHost = world.host;
  let restarted = false;
  // Commits touch the clock: counting them tells an event search when to look again.
  let changes = 0;
  const touch = clock.touch.bind(clock);
  clock.touch = () => {
    changes++;
    touch();
  };
  const users: Record<string, TargetUser> = {};
  const names = new Map<string, string>();
  for (const [name, u] of Object.entries(world.users)) {
    users[name] = { name, id: u.id, pin_code: u.pin_code, display_name: u.display_name, api_key: u.api_key };
    names.set(u.id, name);
  }
  try {
    const subs = Object.entries(sc.users).filter(([, u]) => u.subscribed_days !== undefined);
    if (subs.length) {
      // exactly N days from the start: the trial is replaced by a period the operator grants
      await server.store.transaction((tx) => {
        for (const [name, u] of subs) {
          tx.col(Subscriptions).delete(users[name]!.id);
          if (u.subscribed_days! > 0) subscribe(tx, server.env, users[name]!.id, u.subscribed_days!);
        }
      });
    }
    for (const bot of sc.bots) await world.addBot(bot.text);
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
      return server.url;
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
    async restart() {
      const port = server.port;
      const dataDir = server.dataDir;
      await host.stop();
      await server.close();
      restarted = true;
      server = await startServer({ dataDir, config, clock, registry, host: '127.0.0.1', port, log, services: [ubiService(), pluginsService({ processGuard: false })] });
      const stateDir = join(dataDir, 'bots');
      host = new BotHost({
        ...embeddedHostDeps({ store: server.store, env: server.env, url: server.url, stateDir }),
        registry,
        log,
        clock,
        scheduler: server.scheduler,
        stateDir,
        dir: join(dirname(dataDir), 'bots'),
        jitter: false,
        stepTimeoutMs: parseDuration(config.runtime.step_timeout),
      });
      await host.start();
      await clock.settle();
    },
    async events(kind) {
      if (seen !== changes) cache.clear();
      seen = changes;
      let evs = cache.get(kind);
      if (!evs) cache.set(kind, (evs = storeEvents(server.store.read, kind, names)));
      return evs;
    },
    async close() {
      if (!restarted) return world.close();
      await host.stop();
      await server.close();
      rmSync(dirname(server.dataDir), { recursive: true, force: true });
    },
  };
  return target;
}
