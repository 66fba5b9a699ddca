import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import type { RouteDef } from '../../src/api/route.js';
import supertest from 'supertest';
import { createApp } from '../../src/api/app.js';
import { createHttpServer } from '../../src/http-server.js';
import { configFrom } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import type { DomainEnv } from '../../src/domain/env.js';
import { createKey } from '../../src/domain/users/keys.js';
import { createUser, type User } from '../../src/domain/users/users.js';
import { FileStore } from '../../src/store/file/file-store.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { PgRateStore, prepareRateTable } from '../../src/deployment/pg-rate-store.js';
import { onPostgres, testDatabase } from './pg-db.js';
import { MemoryStore } from '../../src/store/core/memory-store.js';
import type { CommitFeed } from '../../src/store/core/commit-signal.js';
import { openDeployment } from '../../src/deployment/index.js';
import type { Store } from '../../src/store/core/types.js';

/** A fresh temp directory, removed by the returned cleanup. */
export function tempDir(prefix = 'pinbot-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface TestApi {
  /** The store as the app writes through it (its commits go to `commits`, as in `serve`). */
  store: Store;
  commits: CommitFeed;
  /** The data directory (a temp one unless `dir` was given). */
  dir: string;
  clock: VirtualClock;
  env: DomainEnv;
  config: Config;
  /** supertest over the app as `serve` serves it (real HTTP on an ephemeral port). */
  http: ReturnType<typeof supertest>;
  app: ReturnType<typeof createApp>['app'];
  /** The app's record of key use (flushed to the store in batches). */
  keyUsage: ReturnType<typeof createApp>['keyUsage'];
  idempotency: ReturnType<typeof createApp>['idempotency'];
  /** Creates a user with a key; `as(u)` gives headers for requests. */
  user(name: string): Promise<{ user: User; key: string; headers: Record<string, string> }>;
  close(): Promise<void>;
}

/**
 * An API over a real file store in a temp dir (or a memory store; in the postgres test project
 * a PgStore on a fresh database), a virtual clock set to 2026-11-21T12:00:00Z, and the given
 * config overrides (rate limits off unless given).
 */
export async function testApi({
  config: overrides = {},
  memory = false,
  now = Date.parse('2026-11-21T12:00:00Z'),
  routes,
  store: given,
  dir,
  log = pino({ level: 'silent' }),
}: {
  config?: Record<string, unknown>;
  memory?: boolean;
  now?: number;
  /** Routes instead of every /api/v1 route (e.g. a test-only write route). */
  routes?: readonly RouteDef[];
  /** A store to use instead of a fresh one (e.g. a wrapper that delays commits). */
  store?: Store;
  /** An existing data directory to open (not removed by close()). */
  dir?: string;
  log?: Logger;
} = {}): Promise<TestApi> {
  const tmp = dir ? { dir, cleanup: () => undefined } : tempDir();
  const config = configFrom({ rate_limits: { enabled: false }, ...overrides });
  // In the postgres test project, a test's store is a PgStore on a database of its own (the
  // same one for the same `dir`), with rate limits counted in it as `serve` does.
  const pgStore = !given && !memory && onPostgres ? await PgStore.open({ url: await testDatabase(dir) }) : undefined;
  const opened: Store = given ?? pgStore ?? (memory ? new MemoryStore() : await FileStore.open(tmp.dir));
  const clock = new VirtualClock(now);
  // the deployment `serve` makes of a store: the same commit feed, attributed the same way
  const { store, commits } = await openDeployment({
    config,
    dataDir: tmp.dir,
    log,
    store: opened,
    clock,
  });
  const env: DomainEnv = { clock, config };
  if (pgStore) await prepareRateTable(pgStore.pool, pgStore.schema);
  const rateStore = pgStore && ((bucket: string) => new PgRateStore(pgStore.pool, pgStore.schema, clock, bucket));
  const { app, listener, keyUsage, idempotency } = createApp({
    store,
    commits,
    env,
    log,
    routes,
    shared: rateStore && { rateStore },
  });
  // the HTTP server `serve` runs (its limits, and requests born with the app's methods), so
  // the tests go the way production requests go
  const http = supertest(createHttpServer(listener, config.server));
  return {
    store,
    commits,
    dir: tmp.dir,
    clock,
    env,
    config,
    http,
    app,
    keyUsage,
    idempotency,
    async user(name) {
      const { user, key } = await store.transaction((tx) => {
        const user = createUser(tx, env, { name });
        return { user, key: createKey(tx, env, user.id).api_key };
      });
      return { user, key, headers: { 'X-API-Key': key } };
    },
    async close() {
      await store.close();
      tmp.cleanup();
    },
  };
}
