import type pg from 'pg';
import { createSharedTable, inTransaction } from '../store/postgres/pg-schema.js';
import type { Scheduler } from '../clock/scheduler.js';

/** Due times remembered per job (older claims are deleted as new ones are made). */
const KEEP_MS = 30 * 86_400_000;

/** Creates the claims table of `schema` when missing (several processes may start at once). */
export async function prepareJobClaims(pool: pg.Pool, schema: string): Promise<void> {
  await createSharedTable(
    pool,
    schema,
    `CREATE TABLE IF NOT EXISTS "${schema}"."_job_runs" (name text NOT NULL, due ` +
      `bigint NOT NULL, claimed_by text NOT NULL, claimed_at timestamptz NOT NULL ` +
      `DEFAULT now(), PRIMARY KEY (name, due))`,
  );
}

/**
 * Claims the run of job `name` due at `due` (ms): true for exactly one caller, whichever process
 * asks first. The claim and the clean-up of old claims are one statement each, under a
 * transaction-level advisory lock per job.
 */
export function claimJob(pool: pg.Pool, schema: string, name: string, due: number, by: string): Promise<boolean> {
  return inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`pinbot-job:${schema}:${name}`]);
    const r = await client.query(
      `INSERT INTO "${schema}"."_job_runs" (name, due, claimed_by) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [name, due, by],
    );
    await client.query(`DELETE FROM "${schema}"."_job_runs" WHERE name = $1 AND due < $2`, [name, due - KEEP_MS]);
    return r.rowCount === 1;
  });
}

/**
 * A scheduler whose jobs run once per due time across every process on the database: each
 * process fires its own timer, and only the one that claims (job, due time) first runs it; the
 * others skip it. A process that dies during a run does not hand it over: the next run catches
 * up (UBI pays every missed day; the idempotency sweep deletes every old day).
 *
 * @example const scheduler = claimingScheduler(createScheduler(clock), pool, 'pinbot', 'host:1234');
 */
export function claimingScheduler(
  inner: Scheduler,
  pool: pg.Pool,
  schema: string,
  by: string,
  onSkip?: (name: string, at: Date) => void,
): Scheduler {
  return {
    add(name, expression, fn, opts) {
      return inner.add(
        name,
        expression,
        async (at) => {
          if (await claimJob(pool, schema, name, at.getTime(), by)) await fn(at);
          else onSkip?.(name, at);
        },
        opts,
      );
    },
    stop: () => inner.stop(),
  };
}
