import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Low } from 'lowdb';
import type pg from 'pg';
import { writeDataFormat } from './file/data-format.js';
import { checkCollectionName, ensureSchema, inTransaction, q } from './postgres/pg-schema.js';
import { fsyncPath, SCHEMA_VERSION, SnapshotFile, type Snapshot } from './file/snapshot-file.js';
import type { StoredRecord } from './core/types.js';
import { DATA_DIR } from '../util/data-dir.js';
import { OperatorError } from '../util/operator-error.js';

/** The target of an import or export already holds data: nothing was written. */
export class TargetNotEmptyError extends OperatorError {
  constructor(message: string) {
    super(message);
    this.name = 'TargetNotEmptyError';
  }
}

/** Rows per INSERT of a bulk import. Internal. */
const CHUNK = 2000;

/**
 * Writes every record into an empty pinbot schema of PostgreSQL, in one database transaction:
 * the tables, their rows (with their index keys, `keysOf`), and the head set to `seq` (so any
 * process that was already open on the empty schema reloads the tables). Refuses a schema that
 * holds anything.
 *
 * @example await importIntoPostgres(pool, 'pinbot', fileStore.dump(), fileStore.seq, keysOf)
 */
export async function importIntoPostgres(
  pool: pg.Pool,
  schema: string,
  collections: Record<string, readonly StoredRecord[]>,
  seq: number,
  keysOf: (collection: string, record: StoredRecord) => string[],
): Promise<void> {
  const client = await pool.connect();
  try {
    await ensureSchema(client, schema);
    await inTransaction(client, async () => {
      const head = Number(
        (await client.query(`SELECT seq FROM ${q(schema, '_head')} WHERE id = 1 FOR UPDATE`)).rows[0].seq,
      );
      const tables = (await client.query(`SELECT name FROM ${q(schema, '_collections')}`)).rows.map(
        (r) => r.name as string,
      );
      let rows = 0;
      for (const t of tables)
        rows += Number((await client.query(`SELECT count(*) AS n FROM ${q(schema, t)}`)).rows[0].n);
      if (head !== 0 || rows !== 0) {
        throw new TargetNotEmptyError(
          `the PostgreSQL schema "${schema}" is not empty (transaction ${head}, ` +
            `${rows} records): import only into an empty database or schema ` +
            `(store.schema)`,
        );
      }
      for (const [name, records] of Object.entries(collections)) {
        checkCollectionName(name);
        await client.query(
          `CREATE TABLE IF NOT EXISTS ${q(schema, name)} (id text PRIMARY KEY, ` +
            `record json NOT NULL, keys text[] NOT NULL DEFAULT '{}')`,
        );
        await client.query(`CREATE INDEX IF NOT EXISTS "${name}_keys" ON ${q(schema, name)} USING gin (keys)`);
        await client.query(`INSERT INTO ${q(schema, '_collections')} (name) VALUES ($1) ON CONFLICT DO NOTHING`, [
          name,
        ]);
        for (let i = 0; i < records.length; i += CHUNK) {
          const part = records.slice(i, i + CHUNK);
          await client.query(
            `INSERT INTO ${q(schema, name)} (id, record, keys)
             SELECT i, r::json, ARRAY(SELECT json_array_elements_text(k::json)) FROM unnest($1::text[], $2::text[], $3::text[]) AS u(i, r, k)`,
            [
              part.map((r) => r.id),
              part.map((r) => JSON.stringify(r)),
              part.map((r) => JSON.stringify(keysOf(name, r))),
            ],
          );
        }
      }
      await client.query(`UPDATE ${q(schema, '_head')} SET seq = $1 WHERE id = 1`, [Math.max(seq, 1)]);
    });
  } finally {
    client.release();
  }
}

/**
 * Makes a data directory holding exactly `collections` as of `seq`: its snapshot `db.json`
 * (written durably, as a compaction writes it) and no journal. The directory must be new or
 * empty.
 *
 * @example await writeDataDir('./data', pgStore.dump(), pgStore.seq)
 */
export async function writeDataDir(
  dir: string,
  collections: Record<string, StoredRecord[]>,
  seq: number,
): Promise<void> {
  if (existsSync(dir) && readdirSync(dir).length > 0)
    throw new TargetNotEmptyError(`${dir} is not empty: export into a new directory`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const snapshot: Snapshot = { schema_version: SCHEMA_VERSION, seq, collections };
  await new Low<Snapshot | null>(new SnapshotFile(join(dir, DATA_DIR.snapshot)), snapshot).write();
  writeDataFormat(dir);
  await fsyncPath(dir);
}
