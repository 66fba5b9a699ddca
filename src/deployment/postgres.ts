import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import pg from 'pg';
import { createScheduler } from '../clock/scheduler.js';
import type { Config } from '../config/schema.js';
import type { Trace } from '../runtime/index.js';
import { observeCommits } from '../store/core/commit-signal.js';
import type { Store } from '../store/core/types.js';
import { acquireLock } from '../store/file/lock.js';
import { checkSchemaName } from '../store/postgres/pg-schema.js';
import { PgStore } from '../store/postgres/pg-store.js';
import { isBotName } from '../util/bot-name.js';
import { sharedHostDeps } from './bot-deployment.js';
import type { Deployment, DeploymentOptions } from './deployment.js';
import { claimingScheduler, prepareJobClaims } from './pg-jobs.js';
import { PgRateStore, prepareRateTable } from './pg-rate-store.js';
import { prepareTraceTable, readPgTraces } from './pg-traces.js';
import { postgresOptions } from './store-only.js';

/**
 * The traces of a bot in the database of `config.store`, without a server (offline
 * `pinbot bots trace`). One connection, closed before returning.
 */
export async function tracesFromDatabase(config: Config, name: string, limit: number): Promise<Trace[] | undefined> {
  if (!isBotName(name)) return undefined;
  if (!config.store.url) throw new Error('store.driver is postgres but store.url is not set');
  const pool = new pg.Pool({ connectionString: config.store.url, max: 1 });
  try {
    const traces = await readPgTraces(pool, checkSchemaName(config.store.schema), name, limit);
    return traces.length ? traces : undefined;
  } finally {
    await pool.end();
  }
}

/**
 * Several `serve` processes on one PostgreSQL database (`store.driver: postgres`). The data
 * directory still holds this process's admin socket and bot state, so it is locked too: each
 * process needs its own (`--data`). Rate limits count in the database, each cron job runs once
 * per due time whichever process fires it first, bots are leased out (docs/scaling.md).
 */
export async function postgresDeployment(o: DeploymentOptions): Promise<Deployment> {
  mkdirSync(o.dataDir, { recursive: true, mode: 0o700 });
  const release = acquireLock(o.dataDir);
  let pgStore: PgStore;
  try {
    pgStore = await PgStore.open(postgresOptions(o.config, (msg, extra) => o.log.warn(extra ?? {}, msg)));
  } catch (err) {
    release();
    throw err;
  }
  const { pool, schema } = pgStore;
  const opened: Store = {
    get read() {
      return pgStore.read;
    },
    // other processes' commits wake this one's bots (see observeCommits)
    onRemoteCommit: (listener) => pgStore.onRemoteCommit(listener),
    transaction: (fn) => pgStore.transaction(fn),
    durable: () => pgStore.durable(),
    health: () => pgStore.health(),
    close: () => pgStore.close().finally(release),
  } as Store & Pick<PgStore, 'onRemoteCommit'>;
  const { store, commits } = observeCommits(opened, { cause: o.cause });
  try {
    await prepareJobClaims(pool, schema);
    await prepareRateTable(pool, schema);
    await prepareTraceTable(pool, schema);
  } catch (err) {
    await store.close();
    throw err;
  }
  const clock = typeof o.clock === 'function' ? o.clock(opened) : o.clock;
  const by = `${hostname()}:${process.pid}`;
  const onSkip = (name: string, at: Date) =>
    o.log.debug({ job: name, at: at.toISOString() }, 'job run by another process');
  return {
    driver: 'postgres',
    shared: true,
    store,
    commits,
    clock,
    scheduler: claimingScheduler(createScheduler(clock), pool, schema, by, onSkip),
    rateStore: (bucket) => new PgRateStore(pool, schema, clock, bucket),
    botHostDeps: (b) =>
      sharedHostDeps({
        store,
        commits,
        env: b.env,
        url: b.url,
        transport: b.transport,
        stateDir: b.stateDir,
        db: { pool, schema },
        lease: b.lease,
      }),
    storedTraces: async (name, limit) => {
      if (!isBotName(name)) return undefined;
      const traces = await readPgTraces(pool, schema, name, limit);
      return traces.length ? traces : undefined;
    },
    close: () => store.close(),
  };
}
