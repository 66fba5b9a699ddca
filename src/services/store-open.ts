import { parseDuration } from '../util/duration.js';
import { mkdirSync } from 'node:fs';
import type { Config } from '../config/schema.js';
import { FileStore } from '../store/file/file-store.js';
import { acquireLock } from '../store/file/lock.js';
import { PgStore } from '../store/postgres/pg-store.js';
import type { Store } from '../store/core/types.js';
import { dataDirIntegrity } from './store-integrity.js';

export interface OpenedStore {
  store: Store;
  /** The PostgreSQL store when `store.driver` is postgres (its pool serves rate limits and job claims). */
  postgres?: PgStore;
}

/**
 * Opens the store `config.store` names, with the start-up checks of a data directory:
 * `file` — the journaled store of `dataDir` (under its lock); `postgres` — the database of
 * `store.url`. With postgres the data directory still holds this process's admin socket and
 * bot state, so it is locked too: each process needs its own (`--data`).
 *
 * @example const { store } = await openConfiguredStore({ config, dataDir: './data', warn });
 */
export async function openConfiguredStore({ config, dataDir, warn }: { config: Config; dataDir: string; warn: (msg: string, extra?: Record<string, unknown>) => void }): Promise<OpenedStore> {
  if (config.store.driver !== 'postgres') {
    return { store: await FileStore.open(dataDir, { compactBytes: config.store.compact_bytes, integrity: dataDirIntegrity, warn }) };
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const release = acquireLock(dataDir);
  let pg: PgStore;
  try {
    pg = await PgStore.open(postgresOptions(config, warn));
  } catch (err) {
    release();
    throw err;
  }
  const store: Store & Pick<PgStore, 'onRemoteCommit'> = {
    get read() {
      return pg.read;
    },
    // other processes' commits wake this one's bots (see observeCommits)
    onRemoteCommit: (listener) => pg.onRemoteCommit(listener),
    transaction: (fn) => pg.transaction(fn),
    durable: () => pg.durable(),
    health: () => pg.health(),
    close: () => pg.close().finally(release),
  };
  return { store, postgres: pg };
}

/** The PgStore options of a config (driver postgres). */
export function postgresOptions(config: Config, warn: (msg: string, extra?: Record<string, unknown>) => void) {
  if (!config.store.url) throw new Error('store.driver is postgres but store.url is not set');
  return { url: config.store.url, schema: config.store.schema, poolSize: config.store.pool_size, readWaitMs: parseDuration(config.store.read_wait), integrity: dataDirIntegrity, warn };
}
