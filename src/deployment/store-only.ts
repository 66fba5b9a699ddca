import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import { DATA_DIR } from '../util/data-dir.js';
import { storeIsShared } from './driver.js';
import type { Store } from '../store/core/types.js';
import { FileStore } from '../store/file/file-store.js';
import type { PgStoreOptions } from '../store/postgres/pg-store.js';
import { dataDirIntegrity } from './store-integrity.js';
import { parseDuration } from '../util/duration.js';

/**
 * The store alone, without a server (the CLI's offline commands): the deployment's two ways to
 * open it, with the same start-up checks `serve` makes.
 */

/** Opens the journaled store of a data directory, under its lock, with the start-up checks. */
export function openFileStore(o: { config: Config; dataDir: string; warn: (msg: string) => void }): Promise<FileStore> {
  return FileStore.open(o.dataDir, {
    compactBytes: o.config.store.compact_bytes,
    integrity: dataDirIntegrity,
    warn: o.warn,
  });
}

/** The PgStore options of a config (driver postgres). */
export function postgresOptions(
  config: Config,
  warn: (msg: string, extra?: Record<string, unknown>) => void,
): PgStoreOptions {
  if (!config.store.url) throw new Error('store.driver is postgres but store.url is not set');
  return {
    url: config.store.url,
    schema: config.store.schema,
    poolSize: config.store.pool_size,
    readWaitMs: parseDuration(config.store.read_wait),
    integrity: dataDirIntegrity,
    warn,
  };
}

/** Opens the shared database of `config.store` (its driver is loaded only here). */
export async function openSharedStore(config: Config, warn: (msg: string) => void): Promise<Store> {
  const { PgStore } = await import('../store/postgres/pg-store.js');
  return PgStore.open(postgresOptions(config, warn));
}

/**
 * The store a bot's state lives in, opened without a server (the CLI's offline `bots memory`):
 * the shared database; else the data directory's store, or for a bot of a remote server its own
 * file store under `DATA/bots/remote`.
 */
export async function openBotStateStore(o: {
  config: Config;
  dataDir: string;
  remote: boolean;
  warn: (msg: string) => void;
}): Promise<Store> {
  if (storeIsShared(o.config)) return openSharedStore(o.config, o.warn);
  if (!o.remote) return openFileStore(o);
  return FileStore.open(join(o.dataDir, DATA_DIR.bots, 'remote'), { warn: o.warn });
}
