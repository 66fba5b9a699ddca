import { join } from 'node:path';
import pgLib from 'pg';
import { moneyTotals } from '../domain/wallet/integrity.js';
import { checkSchemaName } from '../store/postgres/pg-schema.js';
import { FileStore } from '../store/file/file-store.js';
import { PgStore, type PgStoreOptions } from '../store/postgres/pg-store.js';
import { importIntoPostgres, writeDataDir } from '../store/transfer.js';
import type { StoredRecord } from '../store/core/types.js';
import { BotKeys, keyFilesAsRecords, writeKeyFiles, type BotKey } from './bot-key-vault.js';
import { COLLECTION_DEFS, dataDirIntegrity } from './store-integrity.js';
import { botKeysDir, DATA_DIR } from '../util/data-dir.js';
import { OperatorError } from '../util/operator-error.js';

/** What `pinbot store import|export` checked, and prints. */
export interface TransferReport {
  from: string;
  to: string;
  /** Records per collection, the same on both sides. */
  records: Record<string, number>;
  /** Money in cents, the same on both sides: balances + pending = credits (UBI + grants). */
  money: { balances: number; pending: number; credits: number };
}

/** Thrown when the copy does not match its source; nothing is said to be done. */
export class TransferMismatchError extends OperatorError {
  constructor(what: string) {
    super(
      `the copy does not match its source: ${what}. Nothing was switched over; keep using the source, and report this`,
    );
    this.name = 'TransferMismatchError';
  }
}

/**
 * Compares two states record by record; returns the counts (both equal) or throws. Internal.
 */
function compare(a: Record<string, StoredRecord[]>, b: Record<string, StoredRecord[]>): Record<string, number> {
  const counts: Record<string, number> = {};
  const names = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const name of [...names].sort()) {
    const left = a[name] ?? [];
    const right = new Map((b[name] ?? []).map((r) => [r.id, r]));
    if (left.length !== right.size)
      throw new TransferMismatchError(`${name} has ${left.length} records in the source and ${right.size} in the copy`);
    for (const r of left) {
      const other = right.get(r.id);
      if (!other || JSON.stringify(other) !== JSON.stringify(r))
        throw new TransferMismatchError(`${name} ${r.id} differs`);
    }
    if (left.length > 0) counts[name] = left.length;
  }
  return counts;
}

const { Pool } = pgLib;

const totals = (state: Record<string, StoredRecord[]>) => moneyTotals((name) => state[name] ?? []);

/** Checks money on both sides (equal, and conserved). Internal. */
function sameMoney(a: Record<string, StoredRecord[]>, b: Record<string, StoredRecord[]>): TransferReport['money'] {
  const m = totals(a);
  const n = totals(b);
  if (JSON.stringify(m) !== JSON.stringify(n))
    throw new TransferMismatchError(
      `money differs: ${JSON.stringify(m)} in the source, ${JSON.stringify(n)} in the copy`,
    );
  if (m.balances + m.pending !== m.credits)
    throw new TransferMismatchError(`money does not add up: ${JSON.stringify(m)}`);
  return m;
}

/**
 * Copies a data directory into an empty PostgreSQL schema, then reads it back from the database
 * (with the start-up checks) and compares every record and the money totals before returning.
 * The embedded bots' key files that still work (`bots/keys/`) become `bot_keys` records.
 * The data directory is opened under its lock: the server that uses it must be stopped.
 *
 * @example await importDataDir('./data', { url: process.env.DATABASE_URL! })
 */
export async function importDataDir(dir: string, pg: Omit<PgStoreOptions, 'integrity'>): Promise<TransferReport> {
  const file = await FileStore.open(dir, { integrity: dataDirIntegrity, warn: pg.warn });
  try {
    for (const def of COLLECTION_DEFS) file.read.col(def); // binds the indexes, for their keys
    const source = file.dump();
    // the embedded bots' key files go along (collection bot_keys), so the bots keep their keys
    const held = new Set((source[BotKeys.name] ?? []).map((r) => r.id));
    const keys = (await keyFilesAsRecords(botKeysDir(join(dir, DATA_DIR.bots)), file.read)).filter(
      (k) => !held.has(k.id),
    );
    if (keys.length) source[BotKeys.name] = [...(source[BotKeys.name] ?? []), ...keys];
    const pool = new Pool({ connectionString: pg.url, max: 2 });
    try {
      await importIntoPostgres(pool, checkSchemaName(pg.schema ?? 'pinbot'), source, file.seq, (name, r) =>
        file.keysOf(name, r),
      );
    } finally {
      await pool.end();
    }
    const copy = await PgStore.open({ ...pg, integrity: dataDirIntegrity });
    try {
      const records = compare(source, copy.dump());
      return { from: dir, to: `PostgreSQL schema "${copy.schema}"`, records, money: sameMoney(source, copy.dump()) };
    } finally {
      await copy.close();
    }
  } finally {
    await file.close();
  }
}

/**
 * Copies the database into a new data directory (its snapshot), then opens that directory
 * (with the start-up checks) and compares every record and the money totals before returning.
 * The bots' keys (`bot_keys`) are also written as key files (`bots/keys/NAME.json`).
 *
 * @example await exportDataDir('./data-copy', { url: process.env.DATABASE_URL! })
 */
export async function exportDataDir(dir: string, pg: Omit<PgStoreOptions, 'integrity'>): Promise<TransferReport> {
  const source = await PgStore.open({ ...pg, integrity: dataDirIntegrity });
  try {
    const state = source.dump();
    await writeDataDir(dir, state, source.seq);
    // the bots' keys also as the key files the file driver reads
    await writeKeyFiles(botKeysDir(join(dir, DATA_DIR.bots)), (state[BotKeys.name] ?? []) as BotKey[]);
    const copy = await FileStore.open(dir, { integrity: dataDirIntegrity, warn: pg.warn });
    try {
      const records = compare(state, copy.dump());
      return { from: `PostgreSQL schema "${source.schema}"`, to: dir, records, money: sameMoney(state, copy.dump()) };
    } finally {
      await copy.close();
    }
  } finally {
    await source.close();
  }
}
