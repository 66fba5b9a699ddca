import type pg from 'pg';
import { DataFormatError } from '../core/errors.js';

/**
 * The tables of a pinbot store in PostgreSQL, all in one schema (default `pinbot`):
 *
 * - `_head` — one row: the sequence number of the last committed transaction. A commit locks
 *   it (`SELECT … FOR UPDATE`), so commits of every process are serialised.
 * - `_log` — one row per transaction: its sequence number, the batch it came in (`origin`) and
 *   its change set (`json`, the exact text the engine wrote). Other processes replay it to stay
 *   current; old rows are trimmed (a process further behind reloads the tables).
 * - `_collections` — the names of the collection tables.
 * - one table per collection, named as the collection: `id text` primary key, `record json`
 *   (exact text: key order, `\u0000` and lone surrogates survive, which `jsonb` refuses) and
 *   `keys text[]` with a GIN index — the collection's declared index keys as `index=<JSON key>`,
 *   e.g. `SELECT record FROM pinbot.users WHERE keys @> ARRAY['pin="1234"']`.
 * - `commit(expected, origin, …)` — writes a batch of transactions if the head is still
 *   `expected`, in the caller's database transaction, and notifies `<schema>_log`. Records go
 *   in as JSON text and are never taken apart by PostgreSQL's JSON functions (which refuse
 *   `\u0000`).
 */

/**
 * Version of these tables, in `_head.schema_version`: the data format of a PostgreSQL store. A
 * store refuses a schema of a newer version (one line: DataFormatError).
 */
export const PG_SCHEMA_VERSION = 1;

const IDENT = /^[a-z_][a-z0-9_]{0,47}$/;

/** Checks a schema name (it is put into SQL text and a channel name). */
export function checkSchemaName(schema: string): string {
  if (!IDENT.test(schema))
    throw new Error(
      `store.schema ${JSON.stringify(schema)} is not a lower-case SQL name of at ` +
        `most 48 characters (letters, digits, _)`,
    );
  return schema;
}

/** The name of the notification channel of a schema. */
export const channelOf = (schema: string) => `${schema}_log`;

/** `"schema"."name"`. Internal. */
export const q = (schema: string, name: string) => `"${schema}"."${name}"`;

/** Collection names fit a PostgreSQL identifier (63 bytes). Internal. */
export function checkCollectionName(name: string): void {
  if (!/^[a-z][a-z0-9_]{0,62}$/.test(name))
    throw new Error(
      `collection name ${JSON.stringify(name)} cannot be a PostgreSQL table name (a–z, 0–9, _, at most 63 characters)`,
    );
}

/** The DDL of a schema (idempotent). Internal. */
function ddl(s: string): string {
  return `
CREATE SCHEMA IF NOT EXISTS "${s}";
CREATE TABLE IF NOT EXISTS ${q(s, '_head')} (
  id int PRIMARY KEY CHECK (id = 1),
  seq bigint NOT NULL,
  schema_version int NOT NULL
);
INSERT INTO ${q(s, '_head')} (id, seq, schema_version) VALUES (1, 0, ${PG_SCHEMA_VERSION}) ON CONFLICT (id) DO NOTHING;
CREATE TABLE IF NOT EXISTS ${q(s, '_log')} (
  seq bigint PRIMARY KEY,
  origin text NOT NULL,
  changes json NOT NULL,
  at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS ${q(s, '_collections')} (name text PRIMARY KEY);
CREATE OR REPLACE FUNCTION ${q(
    s,
    'commit',
  )}(expected bigint, origin text, entry_sizes int[], cols text[], ids text[], recs text[],
  key_counts int[], keys text[], logs text[], new_tables text[])
RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE
  h bigint;
  n bigint;
  i int := 0;
  ko int := 0;
  t text;
BEGIN
  SELECT seq INTO h FROM ${q(s, '_head')} WHERE id = 1 FOR UPDATE;
  IF h <> expected THEN
    -- what the caller missed comes back with the refusal: it catches up without another trip
    RETURN json_build_object('ok', false, 'head', h, 'entries',
      (SELECT json_agg(json_build_array(l.seq, l.changes) ORDER BY l.seq)
         FROM (SELECT seq, changes FROM ${q(s, '_log')} WHERE seq > expected ORDER BY seq LIMIT 1000) l));
  END IF;
  FOREACH t IN ARRAY new_tables LOOP
    EXECUTE format('CREATE TABLE IF NOT EXISTS %I.%I (id text PRIMARY KEY, record json NOT NULL, keys text[] NOT NULL DEFAULT ''{}'')', '${
      s
    }', t);
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %I.%I USING gin (keys)', t || '_keys', '${s}', t);
    INSERT INTO ${q(s, '_collections')} (name) VALUES (t) ON CONFLICT DO NOTHING;
  END LOOP;
  n := h;
  FOR e IN 1 .. coalesce(array_length(entry_sizes, 1), 0) LOOP
    n := n + 1;
    FOR j IN 1 .. entry_sizes[e] LOOP
      i := i + 1;
      IF recs[i] IS NULL THEN
        EXECUTE format('DELETE FROM %I.%I WHERE id = $1', '${s}', cols[i]) USING ids[i];
      ELSE
        EXECUTE format('INSERT INTO %I.%I (id, record, keys) VALUES ($1, $2::json, $3) ON CONFLICT (id) DO UPDATE SET record = EXCLUDED.record, keys = EXCLUDED.keys', '${
          s
        }', cols[i])
          USING ids[i], recs[i], keys[ko + 1 : ko + key_counts[i]];
      END IF;
      ko := ko + key_counts[i];
    END LOOP;
    INSERT INTO ${q(s, '_log')} (seq, origin, changes) VALUES (n, origin, logs[e]::json);
  END LOOP;
  UPDATE ${q(s, '_head')} SET seq = n WHERE id = 1;
  PERFORM pg_notify('${channelOf(s)}', n::text);
  RETURN json_build_object('ok', true, 'head', n);
END
$fn$;
`;
}

/**
 * Creates the tables and the commit function of `schema` when missing, under an advisory lock
 * (several processes may start at once), and checks the schema version. Returns the head.
 */
export async function ensureSchema(client: pg.ClientBase, schema: string): Promise<void> {
  await inTransaction(client, async () => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`pinbot-schema:${schema}`]);
    const exists = await client.query(
      `SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = '_head'`,
      [schema],
    );
    if (exists.rowCount) {
      const v = await client.query(`SELECT schema_version FROM ${q(schema, '_head')} WHERE id = 1`);
      const version = v.rows[0]?.schema_version as number | undefined;
      if (version === undefined || !Number.isSafeInteger(version) || version > PG_SCHEMA_VERSION) {
        throw new DataFormatError(
          `the PostgreSQL schema "${schema}" holds pinbot table version ${version}, ` +
            `written by a newer pinbot; this one reads version ${PG_SCHEMA_VERSION}. ` +
            `Install the newer pinbot again on every process, or point store.schema at a schema this version wrote`,
        );
      }
      // An older version (none yet) is brought up to this one here, in this transaction: the
      // whole upgrade commits or none of it does.
      if (version < PG_SCHEMA_VERSION)
        await client.query(`UPDATE ${q(schema, '_head')} SET schema_version = ${PG_SCHEMA_VERSION} WHERE id = 1`);
    }
    await client.query(ddl(schema));
  });
}

/**
 * Runs `fn` in one database transaction: on `db`'s own connection when it is a client, else on
 * a connection of the pool (released after). COMMIT when `fn` resolves; ROLLBACK and rethrow
 * when it throws.
 *
 * @example await inTransaction(pool, async (c) => { await c.query('SELECT pg_advisory_xact_lock(1)'); … });
 */
export async function inTransaction<T>(
  db: pg.Pool | pg.ClientBase,
  fn: (client: pg.ClientBase) => Promise<T>,
): Promise<T> {
  const pooled = 'totalCount' in db;
  const client: pg.ClientBase = pooled ? await (db as pg.Pool).connect() : (db as pg.ClientBase);
  try {
    await client.query('BEGIN');
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    if (pooled) (client as pg.PoolClient).release();
  }
}

/**
 * Creates a table of `schema` when missing, under the schema's advisory lock, so several
 * processes starting at once do not race on the DDL (job claims, shared rate-limit hits).
 */
export async function createSharedTable(pool: pg.Pool, schema: string, ddl: string): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`pinbot-schema:${schema}`]);
    await client.query(ddl);
  });
}
