import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pino } from 'pino';
import { createClient, type Client } from '../../src/client/client.js';
import type { VirtualClock } from '../../src/clock/virtual-clock.js';
import { createKey } from '../../src/domain/users/keys.js';
import { createUser, findUser, type User } from '../../src/domain/users/users.js';
import { grantMoney } from '../../src/domain/wallet/grants.js';
import { createRegistry } from '../../src/runtime/registry.js';
import { BotHost, type HostOptions } from '../../src/runtime/host/bot-host.js';
import type { RunningServer } from '../../src/server.js';
import { createTestWorld } from '../../src/testing/world.js';

export const T0 = Date.parse('2026-11-21T12:00:00Z');

/** A bot file that answers every message with `echo <content>`, acting as a user it creates. */
export const ECHO_BOT =
  'name: echo\nas: Echo\ncreate_user: true\nrules:\n  - on: message.received\n    ' +
  'do:\n      - reply: "echo {{ event.content }}"\n';

/** What a test gives a host: the defaults (built-in registry, silent log, no jitter) may be left out. */
export type TestHostOptions = Omit<HostOptions, 'registry' | 'log'> & Partial<Pick<HostOptions, 'registry' | 'log'>>;

/** A BotHost with the test defaults — the one place tests build a host; pass what differs. */
export function testHost(o: TestHostOptions): BotHost {
  return new BotHost({ registry: createRegistry(), log: pino({ level: 'silent' }), jitter: false, ...o });
}

/** A second host over a bot world's server and bots folder (a restart of the world's host). */
export function hostOver(w: Pick<BotWorld, 'server' | 'botsDir'>, o: Partial<TestHostOptions> = {}): BotHost {
  const stateDir = join(w.server.dataDir, 'bots');
  return testHost({
    clock: w.server.clock,
    scheduler: w.server.scheduler,
    dir: w.botsDir,
    ...w.server.deployment.botHostDeps({ env: w.server.env, url: w.server.url, stateDir }),
    ...o,
  });
}

export interface BotWorld {
  server: RunningServer;
  clock: VirtualClock;
  host: BotHost;
  dir: string;
  botsDir: string;
  /** A user with a key, a client acting as them, and `balance` granted. */
  user(name: string, balance?: number): Promise<{ user: User; key: string; api: Client }>;
  /** The user a bot acts as, once its runner has started. */
  botUser(name: string): User;
  writeBot(file: string, text: string): void;
  removeBot(file: string): void;
  /** Polls the bot now and waits until its events are handled. */
  poll(name: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * A real embedded server (virtual clock at T0, temp data dir, no default services) and a bot
 * host over a temp bots folder, with fast retries and no poll jitter: the test kit's world
 * (createTestWorld) with these settings; the bots start with `w.host.start()`.
 */
export async function botWorld({
  config = {},
  host: hostOpts = {},
  bots = {},
}: {
  config?: Record<string, unknown>;
  host?: Partial<HostOptions>;
  bots?: Record<string, string>;
} = {}): Promise<BotWorld> {
  const world = await createTestWorld({
    start: T0,
    config: { rate_limits: { enabled: false }, ...config },
    log: pino({ level: process.env.TEST_LOG ?? 'silent' }),
    registry: createRegistry(),
    services: false,
    botFiles: bots,
    // the host's own step timeout (the config's runtime.step_timeout reaches a host only through serve)
    hostOptions: {
      stepTimeoutMs: undefined,
      client: { retry: { attempts: 2, baseMs: 5, capMs: 20 } },
      retryBaseMs: 20,
      ...hostOpts,
    },
  });
  const { server, host, botsDir } = world;
  return {
    server,
    clock: world.clock,
    host,
    dir: dirname(world.dataDir),
    botsDir,
    async user(name, balance = 0) {
      const { user, key } = await server.store.transaction((tx) => {
        const user = createUser(tx, server.env, { name });
        if (balance) grantMoney(tx, server.env, user.id, Math.round(balance * 100));
        return { user, key: createKey(tx, server.env, user.id).api_key };
      });
      return { user, key, api: createClient({ baseUrl: server.url, apiKey: key }) };
    },
    botUser(name) {
      const r = host.runner(name);
      if (!r?.me) throw new Error(`bot ${name} has no user yet (status ${r?.status}: ${r?.message})`);
      return findUser(server.store.read, r.me.pin_code)!;
    },
    writeBot: (f, t) => writeFileSync(join(botsDir, f), t),
    removeBot: (f) => rmSync(join(botsDir, f)),
    async poll(name) {
      const r = host.runner(name);
      if (!r) throw new Error(`no bot ${name}: ${JSON.stringify(host.status())}`);
      await r.pollNow();
    },
    close: () => world.close(),
  };
}
