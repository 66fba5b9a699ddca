import type pg from 'pg';
import type { Trace, TraceArchive } from '../runtime/index.js';
import { createSharedTable } from '../store/postgres/pg-schema.js';

/** The traces table of a schema. Internal. */
const table = (schema: string) => `"${schema}"."bot_traces"`;

/**
 * Creates the traces table of `schema` when missing (under the schema's advisory lock: several
 * processes may start at once); `serve` does it at start-up, with the other shared tables.
 * `trace` is `json`, not `jsonb`: a trace holds message text as anyone sent it, and `jsonb`
 * refuses `\u0000` and lone surrogates — one such message would lose its whole batch.
 */
export function prepareTraceTable(pool: pg.Pool, schema: string): Promise<void> {
  return createSharedTable(
    pool,
    schema,
    `CREATE TABLE IF NOT EXISTS ${table(
      schema,
    )} (bot text NOT NULL, seq bigserial NOT NULL, at text NOT NULL, trace json NOT NULL);
     CREATE INDEX IF NOT EXISTS bot_traces_bot_seq ON ${table(schema)} (bot, seq)`,
  );
}

/**
 * The newest `limit` traces of a bot in the database, oldest first — whichever process ran it,
 * and whether or not one runs it now (`pinbot bots trace` on any process).
 *
 * @example const traces = await readPgTraces(pool, 'pinbot', 'tip-jar', 20);
 */
export async function readPgTraces(pool: pg.Pool, schema: string, bot: string, limit: number): Promise<Trace[]> {
  try {
    return (await newest(pool, schema, bot, limit)).traces;
  } catch (err) {
    // no server has started on this database yet (e.g. right after `store import`)
    if ((err as { code?: string }).code === '42P01') return [];
    throw err;
  }
}

/** The newest `limit` traces of a bot, oldest first, and how many rows it has: one query. Internal. */
async function newest(
  pool: pg.Pool,
  schema: string,
  bot: string,
  limit: number,
): Promise<{ traces: Trace[]; rows: number }> {
  const r = await pool.query(
    `SELECT x.t, (SELECT count(*) FROM ${table(schema)} WHERE bot = $1) AS n
       FROM (SELECT seq, trace::text AS t FROM ${table(schema)} WHERE bot = $1 ORDER BY seq DESC LIMIT $2) x
      RIGHT JOIN (SELECT 1) one ON true ORDER BY x.seq`,
    [bot, limit],
  );
  const rows = Number(r.rows[0]?.n ?? 0);
  return { traces: r.rows.filter((row) => row.t !== null).map((row) => JSON.parse(row.t as string) as Trace), rows };
}

/**
 * The trace history of one bot in PostgreSQL (`<schema>.bot_traces`), for `serve` processes
 * sharing a database: a bot taken over by another process keeps its history there. A batch is
 * one INSERT, in order; once the bot has written twice its bound since the last prune, rows
 * older than its `keep`-th newest are deleted (so a bot's rows stay under three times its bound,
 * and reading the newest stays one index scan). The table must exist (`prepareTraceTable`).
 *
 * @example const log = await TraceLog.over(pgTraceArchive(pool, 'pinbot', 'tip-jar'), 100);
 */
export function pgTraceArchive(pool: pg.Pool, schema: string, bot: string): TraceArchive {
  /** Rows of this bot since the last prune (counted at load: another process may have written). */
  let rows = 0;
  return {
    async load(limit) {
      const found = await newest(pool, schema, bot, limit);
      rows = found.rows;
      return found.traces;
    },
    async append(traces, keep) {
      if (traces.length === 0) return;
      await pool.query(
        `INSERT INTO ${table(schema)} (bot, at, trace)
         SELECT $1, u.at, u.trace FROM unnest($2::text[], $3::json[]) WITH ORDINALITY AS u(at, trace, n) ORDER BY u.n`,
        [bot, traces.map((t) => t.at), traces.map((t) => JSON.stringify(t))],
      );
      rows += traces.length;
      if (rows > Math.max(1, keep) * 2) {
        await pool.query(
          `DELETE FROM ${table(schema)} WHERE bot = $1 AND seq < (SELECT seq FROM ` +
            `${table(schema)} WHERE bot = $1 ORDER BY seq DESC OFFSET $2 LIMIT 1)`,
          [bot, Math.max(1, keep) - 1],
        );
        rows = keep;
      }
    },
  };
}
