import { createHash } from 'node:crypto';
import { inject } from 'vitest';
import pg from 'pg';

/** Whether this run parameterises the API tests over PostgreSQL (the `postgres` test project). */
export const onPostgres = process.env.PINBOT_TEST_DRIVER === 'postgres';

let n = 0;

/**
 * A database on the run's PostgreSQL server: a fresh one, or with `key` (e.g. a data directory
 * a test opens twice) the same one each time, made on first use. Returns its URL.
 */
export async function testDatabase(key?: string): Promise<string> {
  const admin = inject('pgAdminUrl');
  if (!admin)
    throw new Error('no PostgreSQL server for this test: run it in the postgres project (vitest --project postgres)');
  const name = key
    ? `k_${createHash('sha256').update(key).digest('hex').slice(0, 24)}`
    : `t_${process.pid}_${++n}_${Date.now().toString(36)}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  try {
    const exists = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!exists.rowCount) await c.query(`CREATE DATABASE "${name}"`);
  } finally {
    await c.end();
  }
  return admin.replace(/\/[^/]*$/, `/${name}`);
}
