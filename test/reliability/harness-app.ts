import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { AdminError, runAdminCommand, type AdminContext } from '../../src/admin/commands.js';
import { createApp } from '../../src/api/app.js';
import type { RouteDef } from '../../src/api/route.js';
import { allRoutes } from '../../src/api/routes.js';
import { configFrom } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { systemClock, type Clock } from '../../src/clock/clock.js';
import type { DomainEnv } from '../../src/domain/env.js';
import { Users, type User } from '../../src/domain/users/users.js';
import { createLogger } from '../../src/log.js';
import { dataDirIntegrity } from '../../src/deployment/store-integrity.js';
import { FileStore } from '../../src/store/file/file-store.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { send } from './http.js';
import type { OpenApiDoc } from './openapi-ops.js';
import { RecordingStore } from './recording-store.js';
import { observeCommits } from '../../src/store/core/commit-signal.js';

/** A user made for the harness, with a working key. */
export interface Actor {
  name: string;
  id: string;
  pin: string;
  key: string;
  /** Index of the actor's group: actors of different groups never interact. */
  group: number;
}

/** A clock fixed to a calendar date but moving with real time (timestamps stay increasing). */
export function offsetClock(startIso = '2026-11-21T12:00:00Z'): Clock {
  const base = Date.parse(startIso);
  const t0 = Date.now();
  const offset = base - t0;
  return {
    virtual: false,
    now: () => Date.now() + offset,
    setTimer: (at, fn, opts) => systemClock.setTimer(at - offset, fn, opts),
    sleepUntil: (at, signal, opts) => systemClock.sleepUntil(at - offset, signal, opts),
    sleep: (ms, signal, opts) => systemClock.sleep(ms, signal, opts),
    hold: () => () => undefined,
    touch: () => undefined,
  };
}

export interface HarnessOptions {
  routes?: readonly RouteDef[];
  /** config.yaml overrides (rate limits are off unless given). */
  config?: Record<string, unknown>;
  /** Log level of the captured pino output (default silent). */
  logLevel?: string;
  /** The URL of an empty PostgreSQL database: the store is a PgStore on it instead of a FileStore. */
  database?: string;
}

/**
 * The API in this process over a real FileStore in a temp dir (or a PgStore on `database`),
 * served on an ephemeral port,
 * with every write recorded and the pino output captured. Shared by the fuzz, the authorization
 * matrix and the canary.
 *
 * @example
 * const h = await startHarness();
 * const alice = await h.addActor('Alice', 0);
 * await h.close();
 */
export async function startHarness({
  routes = allRoutes,
  config: overrides = {},
  logLevel = 'silent',
  database,
}: HarnessOptions = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'pinbot-rel-'));
  const inner = database
    ? await PgStore.open({ url: database, integrity: dataDirIntegrity, warn: () => undefined })
    : await FileStore.open(dir);
  const store = new RecordingStore(inner);
  // every write goes through the commit feed `serve` has (the API's change counters hear of it)
  const observed = observeCommits(store);
  const config: Config = configFrom({ rate_limits: { enabled: false }, ...overrides });
  const env: DomainEnv = { clock: offsetClock(), config };
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logLines.push(chunk.toString('utf8'));
      done();
    },
  });
  const log = createLogger({ level: logLevel, pretty: false, destination: sink });
  const servers: Server[] = [];
  const admin: AdminContext = { store: observed.store, env, log };

  /** Serves another app (e.g. with other config) over the same store. */
  async function serveApp(appConfig: Config = config, appRoutes: readonly RouteDef[] = routes): Promise<string> {
    const { app } = createApp({ ...observed, env: { clock: env.clock, config: appConfig }, log, routes: appRoutes });
    const server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  const url = await serveApp();
  const doc = (await send(url, { method: 'GET', path: '/openapi.json', headers: {} })).json as OpenApiDoc;
  let grantsWork: boolean | undefined;

  return {
    dir,
    url,
    doc,
    store,
    env,
    config,
    routes,
    logLines,
    admin,
    serveApp,
    /** Creates a user through the operator command, as `pinbot users add` does. */
    async addActor(name: string, group: number): Promise<Actor> {
      const r = (await runAdminCommand(admin, 'users.add', { name })) as {
        id: string;
        pin_code: string;
        api_key: string;
      };
      return { name, id: r.id, pin: r.pin_code, key: r.api_key, group };
    },
    /** An operator grant; false when this build has no wallet. */
    async grant(pin: string, amount: number): Promise<boolean> {
      if (grantsWork === false) return false;
      try {
        await runAdminCommand(admin, 'users.grant', { pin, amount });
        grantsWork = true;
      } catch (err) {
        if (!(err instanceof AdminError)) throw err;
        grantsWork = false;
      }
      return grantsWork;
    },
    /** A second key of `pin`, already revoked. */
    async revokedKey(pin: string): Promise<string> {
      const k = (await runAdminCommand(admin, 'keys.create', { pin })) as { id: string; api_key: string };
      await runAdminCommand(admin, 'keys.revoke', { id: k.id });
      return k.api_key;
    },
    user(id: string): User {
      return store.read.col(Users).get(id)!;
    },
    /** Stops the servers and closes the store (snapshot written); the dir stays until `cleanup`. */
    async close(): Promise<void> {
      for (const s of servers.splice(0)) {
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
      await store.close();
    },
    cleanup(): void {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type Harness = Awaited<ReturnType<typeof startHarness>>;
