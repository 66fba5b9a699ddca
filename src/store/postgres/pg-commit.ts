import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { checkCollectionName, inTransaction, q } from './pg-schema.js';
import { outcomeUnknown } from './pg-sync.js';
import type { StoreEngine, UndoLog } from '../core/engine.js';
import type { Change, StoredRecord, Tx } from '../core/types.js';

/** The arguments of the schema's `commit` function for a batch of change sets. Internal. */
export interface CommitArgs {
  sizes: number[];
  cols: string[];
  ids: string[];
  recs: Array<string | null>;
  keyCounts: number[];
  keys: string[];
  logs: string[];
  newTables: string[];
}

/**
 * Lays a batch out as flat arrays: records go in as JSON text, never taken apart by
 * PostgreSQL's JSON functions (which refuse `\u0000`). `known` says which tables exist.
 */
export function encodeBatch(
  batch: ReadonlyArray<readonly Change[]>,
  known: ReadonlySet<string>,
  keysOf: (collection: string, record: StoredRecord) => string[],
): CommitArgs {
  const a: CommitArgs = { sizes: [], cols: [], ids: [], recs: [], keyCounts: [], keys: [], logs: [], newTables: [] };
  const fresh = new Set<string>();
  for (const changes of batch) {
    a.sizes.push(changes.length);
    a.logs.push(JSON.stringify(changes));
    for (const [name, id, record] of changes) {
      if (!known.has(name)) fresh.add(name);
      a.cols.push(name);
      a.ids.push(id);
      a.recs.push(record ? JSON.stringify(record) : null);
      const k = record ? keysOf(name, record) : [];
      a.keyCounts.push(k.length);
      a.keys.push(...k);
    }
  }
  for (const name of fresh) checkCollectionName(name);
  a.newTables = [...fresh];
  return a;
}

/** What `commit` answered: written, or refused because the head moved (with what was missed). */
export type CommitResult = { ok: true } | { ok: false; head: number; entries: Array<[number, Change[]]> };

/** Calls `commit(base, …)`. Internal. */
export async function callCommit(
  db: pg.Pool | pg.ClientBase,
  schema: string,
  base: number,
  origin: string,
  a: CommitArgs,
): Promise<CommitResult> {
  const res = await db.query(`SELECT ${q(schema, 'commit')}($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) AS r`, [
    base,
    origin,
    a.sizes,
    a.cols,
    a.ids,
    a.recs,
    a.keyCounts,
    a.keys,
    a.logs,
    a.newTables,
  ]);
  const r = res.rows[0].r as { ok: boolean; head: number; entries?: Array<[number, Change[]]> | null };
  return r.ok ? { ok: true } : { ok: false, head: Number(r.head), entries: r.entries ?? [] };
}

/**
 * After a lost connection: whether the batch `origin` was committed after `base`. Waits,
 * under the head lock (so a commit still running on a dead connection has finished), until
 * the database answers, retrying with back-off. Internal.
 */
export async function wasWritten(pool: pg.Pool, schema: string, base: number, origin: string): Promise<boolean> {
  for (let delay = 100; ; delay = Math.min(delay * 2, 5000)) {
    try {
      return await inTransaction(pool, async (client) => {
        await client.query(`SELECT seq FROM ${q(schema, '_head')} WHERE id = 1 FOR UPDATE`);
        const found = await client.query(`SELECT 1 FROM ${q(schema, '_log')} WHERE seq > $1 AND origin = $2 LIMIT 1`, [
          base,
          origin,
        ]);
        return (found.rowCount ?? 0) > 0;
      });
    } catch (err) {
      if (!outcomeUnknown(err)) throw err;
      await sleep(delay);
    }
  }
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Why a change set cannot be stored in PostgreSQL (an id with NUL or a lone surrogate, which
 * `text` cannot hold; a collection name that cannot be a table), or undefined. Internal.
 */
export function unstorable(changes: readonly Change[], tables: ReadonlySet<string>): string | undefined {
  for (const [name, id] of changes) {
    if (typeof id !== 'string' || id.includes('\u0000') || LONE_SURROGATE.test(id))
      return `${name}: the id ${JSON.stringify(id)} cannot be stored (no NUL characters or lone surrogates in ids)`;
    if (!tables.has(name)) {
      try {
        checkCollectionName(name);
      } catch (err) {
        return (err as Error).message;
      }
    }
  }
  return undefined;
}

/** What one transaction function did in a run of its batch. Internal. */
export type Outcome = { ok: true; result: unknown; changes: Change[]; undo: UndoLog } | { ok: false; error: unknown };

/**
 * Runs a batch's functions one after another on the engine's state, then takes their changes
 * back (newest first, in the same tick: no reader sees them before they are committed).
 * Internal.
 */
export function runBatch(
  engine: StoreEngine,
  batch: ReadonlyArray<{ fn: (tx: Tx) => unknown }>,
  tables: ReadonlySet<string>,
): Outcome[] {
  const base = engine.seq;
  const outcomes: Outcome[] = batch.map((p) => {
    try {
      const run = engine.run(p.fn);
      const bad = unstorable(run.changes, tables);
      if (bad) {
        engine.revert(run.undo);
        return { ok: false, error: new Error(bad) };
      }
      return { ok: true, result: run.result, changes: run.changes, undo: run.undo };
    } catch (error) {
      return { ok: false, error };
    }
  });
  for (let i = outcomes.length - 1; i >= 0; i--) {
    const o = outcomes[i]!;
    if (o.ok) engine.revert(o.undo);
  }
  engine.seq = base;
  return outcomes;
}
