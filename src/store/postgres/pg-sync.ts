import pg from 'pg';
import { observeId } from '../../util/ids.js';
import type { StoreEngine } from '../core/engine.js';
import { StoreDamagedError } from '../core/errors.js';
import type { StoreIntegrity } from '../core/integrity.js';
import { q } from './pg-schema.js';
import { declaredCollections, type Change, type StoredRecord } from '../core/types.js';

/** Log entries fetched by one catch-up query. Internal. */
export const FETCH = 1000;

/** The state of a schema as of one moment. Internal. */
export interface PgState {
  head: number;
  collections: Record<string, StoredRecord[]>;
}

/** Every table of `schema`, read in one snapshot (REPEATABLE READ), with the head it is at. */
export async function readState(pool: pg.Pool, schema: string): Promise<PgState> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const head = Number((await client.query(`SELECT seq FROM ${q(schema, '_head')} WHERE id = 1`)).rows[0].seq);
    const names = (await client.query(`SELECT name FROM ${q(schema, '_collections')} ORDER BY name`)).rows.map(
      (r) => r.name as string,
    );
    const collections: Record<string, StoredRecord[]> = {};
    for (const name of names) {
      const rows = await client.query({
        text: `SELECT record FROM ${q(schema, name)} ORDER BY id COLLATE "C"`,
        rowMode: 'array',
      });
      collections[name] = rows.rows.map((r) => r[0] as StoredRecord);
    }
    await client.query('COMMIT');
    return { head, collections };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** The start-up checks of a loaded state (as the file store's for a snapshot). Internal. */
export function checkState(state: PgState, schema: string, integrity: StoreIntegrity | undefined): void {
  if (!integrity) return;
  const where = `PostgreSQL schema "${schema}"`;
  const remedy =
    'Restore the database from a backup, or import a data directory that passes its checks (pinbot store import)';
  const known = integrity.collections ? new Set([...integrity.collections, ...declaredCollections()]) : undefined;
  for (const [name, records] of Object.entries(state.collections)) {
    if (known && !known.has(name)) throw new StoreDamagedError(where, `unknown collection table "${name}"`, remedy);
    const check = integrity.records && Object.hasOwn(integrity.records, name) ? integrity.records[name] : undefined;
    for (const r of records) {
      const why = check?.(r);
      if (why !== undefined) throw new StoreDamagedError(where, `${name} ${r.id}: ${why}`, remedy);
    }
  }
  const why = integrity.verify?.((name) => state.collections[name] ?? []);
  if (why !== undefined) throw new StoreDamagedError(where, why, remedy);
}

/** The head and the log entries after `from` (at most FETCH), in one query (one snapshot). Internal. */
export async function fetchLog(
  db: pg.Pool | pg.ClientBase,
  schema: string,
  from: number,
): Promise<{ head: number; entries: Array<[number, Change[]]> }> {
  const r = await db.query({
    text: `SELECT (SELECT seq FROM ${q(schema, '_head')} WHERE id = 1) AS head, l.seq, l.changes
       FROM (SELECT 1) one
       LEFT JOIN LATERAL (SELECT seq, changes FROM ${q(
         schema,
         '_log',
       )} WHERE seq > $1 ORDER BY seq LIMIT ${FETCH}) l ON true`,
    values: [from],
    rowMode: 'array',
  });
  const entries: Array<[number, Change[]]> = [];
  for (const [, seq, changes] of r.rows) if (seq !== null) entries.push([Number(seq), changes as Change[]]);
  return { head: Number(r.rows[0]![0]), entries };
}

/**
 * Applies log entries (fetched with the head `head`) to `engine` in order. Returns false when
 * they do not continue its state — the log was trimmed past it — and the caller reloads the
 * tables. Ids of the records applied are observed, so ids made here later sort after them
 * (newest first holds across processes).
 */
export function applyEntries(engine: StoreEngine, entries: ReadonlyArray<[number, Change[]]>, head: number): boolean {
  for (const [seq, changes] of entries) {
    if (seq <= engine.seq) continue;
    if (seq !== engine.seq + 1) return false;
    applyChanges(engine, changes);
    engine.seq = seq;
  }
  return engine.seq >= head || entries.length > 0;
}

/** Applies one committed change set. Internal. */
export function applyChanges(engine: StoreEngine, changes: readonly Change[]): void {
  for (const [name, id, record] of changes) {
    engine.applyOne(name, id, record);
    if (record) observeId(id);
  }
}

/** Brings `engine` to `state` (after a gap in the log): removes what is gone, applies the rest. */
export function replaceState(engine: StoreEngine, state: PgState): void {
  for (const name of [...engine.names()]) {
    const keep = new Set((state.collections[name] ?? []).map((r) => r.id));
    for (const r of [...engine.rawRecords(name)]) if (!keep.has(r.id)) engine.applyOne(name, r.id, null);
  }
  for (const [name, records] of Object.entries(state.collections)) {
    for (const r of records) {
      if (engine.peek(name, r.id) === undefined || JSON.stringify(engine.peek(name, r.id)) !== JSON.stringify(r))
        engine.applyOne(name, r.id, r);
    }
  }
  for (const id of engine.maxIds()) observeId(id);
  engine.seq = state.head;
}

/**
 * Whether an error leaves a commit's outcome unknown: the connection failed (the commit may
 * have happened before the answer was lost) rather than the server refusing the statement.
 */
export function outcomeUnknown(err: unknown): boolean {
  if (!(err instanceof pg.DatabaseError)) return true;
  const cls = (err.code ?? '').slice(0, 2);
  return cls === '08' || cls === '57' || cls === '53' || cls === '58' || cls === 'XX';
}
