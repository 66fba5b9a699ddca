import { writeFileSync } from 'node:fs';
import { Transactions } from '../../src/domain/wallet/transactions.js';
import { dataDirIntegrity } from '../../src/deployment/store-integrity.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { assertConserved } from '../sim/ledger.js';

/**
 * The config file of the crash loop's servers: rate limits and bots off, info logs; the file
 * store compacting at `compactBytes` (so kills land in compactions too), or with `database`
 * the PostgreSQL store on that database (`store.driver: postgres`, as an operator sets it).
 */
export function writeCrashConfig(
  file: string,
  { compactBytes, database }: { compactBytes: number; database?: string },
): void {
  const store = database
    ? `store: { driver: postgres, url: ${JSON.stringify(database)} }`
    : `store: { compact_bytes: ${compactBytes} }`;
  writeFileSync(file, `rate_limits: { enabled: false }\nbots: { enabled: false }\n${store}\nlog: { level: info }\n`, {
    mode: 0o600,
  });
}

/** What a fresh load of the database found. */
export interface DatabaseCheck {
  /** Undefined when the state loads, passes the start-up checks and the books balance. */
  problem?: string;
  transactions: number;
}

/**
 * Loads the whole database afresh in this process — a PgStore of its own, with the start-up
 * checks `serve` runs (known collections, record shapes, money) — and adds up the books:
 * balances + pending = UBI + grants over every account, tracked by the loop or not. A kill in
 * the middle of a commit must leave either all of it or none (no torn state).
 *
 * @example const c = await checkDatabase(url); if (c.problem) console.log(c.problem);
 */
export async function checkDatabase(url: string): Promise<DatabaseCheck> {
  let store: PgStore | undefined;
  try {
    store = await PgStore.open({ url, integrity: dataDirIntegrity, warn: () => undefined, poolSize: 2 });
    assertConserved(store.read, 'a fresh load of the database');
    return { transactions: store.read.col(Transactions).count() };
  } catch (err) {
    return { problem: (err as Error).message, transactions: 0 };
  } finally {
    await store?.close();
  }
}
