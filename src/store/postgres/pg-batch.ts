import type pg from 'pg';
import type { StoreEngine } from '../core/engine.js';
import type { Change, Tx } from '../core/types.js';
import type { WriteGate } from '../core/write-gate.js';
import { callCommit, encodeBatch, runBatch, wasWritten, type CommitResult, type Outcome } from './pg-commit.js';
import { q } from './pg-schema.js';
import { fetchLog, outcomeUnknown } from './pg-sync.js';

/** A queued transaction: its function and its caller. */
export interface PendingWrite {
  fn: (tx: Tx) => unknown;
  resolve: (v: unknown) => void;
  reject: (err: unknown) => void;
}

/** Log rows kept behind the head (a process further behind reloads the tables). */
const KEEP = 10_000;
const TRIM_EVERY = 1000;
/** Commit attempts without the head lock before a batch takes it and runs under it. */
const OPTIMISTIC_TRIES = 3;

/** What committing a batch needs of its PgStore. */
export interface PgBatchContext {
  engine: StoreEngine;
  pool: pg.Pool;
  schema: string;
  /** The collection tables known to exist (new ones are made by the commit). */
  tables: Set<string>;
  gate: WriteGate;
  warn(msg: string): void;
  /** The origin of the next batch (this process, and the batch's number). */
  nextOrigin(): string;
  /** Applies other processes' log entries; false on a gap (then `reload`). */
  applyRemote(entries: ReadonlyArray<[number, Change[]]>, head: number): boolean;
  /** Reloads every table. */
  reload(): Promise<void>;
  /** Runs a query; a lost connection turns into StorageUnavailableError. */
  guard<T>(fn: () => Promise<T>): Promise<T>;
}

// A commit runs the batch on the local state at the head it knows and calls `commit` in
// PostgreSQL; refused (the head moved), it applies what it missed and runs again, and after
// OPTIMISTIC_TRIES it runs under the head lock (see PgStore and docs/store.md).

/** Commits one batch: optimistic tries, then under the head lock. Under the store's mutex. */
export async function commitBatch(c: PgBatchContext, batch: readonly PendingWrite[]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    if (attempt > OPTIMISTIC_TRIES) return commitLocked(c, batch);
    const base = c.engine.seq;
    const outcomes = runBatch(c.engine, batch, c.tables);
    const writes = outcomes.filter((o): o is Extract<Outcome, { ok: true }> => o.ok && o.changes.length > 0);
    if (writes.length === 0) {
      // Nothing to write: the outcomes hold if this state was the head.
      const { head, entries } = await c.guard(() => fetchLog(c.pool, c.schema, base));
      if (head === base) return settle(c, batch, outcomes, []);
      if (!c.applyRemote(entries, head)) await c.reload();
      continue;
    }
    const origin = c.nextOrigin();
    const r = await send(c, base, origin, writes, c.pool);
    if (!r.ok) {
      if (!c.applyRemote(r.entries, r.head)) await c.reload();
      continue;
    }
    return settle(c, batch, outcomes, writes);
  }
}

/** The last resort of a batch that keeps losing: holds the head lock while it runs. */
async function commitLocked(c: PgBatchContext, batch: readonly PendingWrite[]): Promise<void> {
  const client = await c.guard(() => c.pool.connect());
  let outcomes: Outcome[] = [];
  let writes: Array<Extract<Outcome, { ok: true }>> = [];
  try {
    await client.query('BEGIN');
    const head = Number(
      (await client.query(`SELECT seq FROM ${q(c.schema, '_head')} WHERE id = 1 FOR UPDATE`)).rows[0].seq,
    );
    while (c.engine.seq < head) {
      const { entries } = await fetchLog(client, c.schema, c.engine.seq);
      if (!c.applyRemote(entries, head)) {
        await client.query('ROLLBACK');
        await c.reload();
        return commitBatch(c, batch);
      }
    }
    outcomes = runBatch(c.engine, batch, c.tables);
    writes = outcomes.filter((o): o is Extract<Outcome, { ok: true }> => o.ok && o.changes.length > 0);
    if (writes.length > 0) {
      const r = await send(c, head, c.nextOrigin(), writes, client, true);
      if (!r.ok) throw new Error('the head moved while this process held its lock');
    } else await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
  settle(c, batch, outcomes, writes);
}

/**
 * Calls `commit` in PostgreSQL. A refused statement rejects; a lost connection waits until
 * the log tells whether the batch was written.
 */
async function send(
  c: PgBatchContext,
  base: number,
  origin: string,
  writes: ReadonlyArray<Extract<Outcome, { ok: true }>>,
  db: pg.Pool | pg.PoolClient,
  inTx = false,
): Promise<CommitResult> {
  const args = encodeBatch(
    writes.map((w) => w.changes),
    c.tables,
    (name, record) => c.engine.keysOf(name, record),
  );
  try {
    const r = await callCommit(db, c.schema, base, origin, args);
    if (inTx) await (db as pg.PoolClient).query('COMMIT');
    if (!r.ok) return r;
  } catch (err) {
    if (!outcomeUnknown(err)) throw err;
    c.gate.failed(err);
    if (!(await wasWritten(c.pool, c.schema, base, origin))) throw c.gate.refusal();
  }
  for (const name of args.newTables) c.tables.add(name);
  const head = base + writes.length;
  if (Math.floor(head / TRIM_EVERY) > Math.floor(base / TRIM_EVERY) && head > KEEP) {
    void c.pool
      .query(`DELETE FROM ${q(c.schema, '_log')} WHERE seq <= $1`, [head - KEEP])
      .catch((err) => c.warn(`trimming the change log failed: ${(err as Error).message}`));
  }
  return { ok: true };
}

/** Applies the committed writes and answers every caller of the batch. */
function settle(
  c: PgBatchContext,
  batch: readonly PendingWrite[],
  outcomes: Outcome[],
  writes: ReadonlyArray<Extract<Outcome, { ok: true }>>,
): void {
  for (const w of writes) {
    c.engine.apply(w.changes);
    c.engine.seq++;
  }
  batch.forEach((p, i) => {
    const o = outcomes[i]!;
    if (o.ok) p.resolve(o.result);
    else p.reject(o.error);
  });
}
