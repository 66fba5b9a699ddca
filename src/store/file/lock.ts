import { linkSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { DATA_DIR } from '../../util/data-dir.js';
import { OperatorError } from '../../util/operator-error.js';

/** Thrown when another live process (or this one) holds the data directory. */
export class DataDirLockedError extends OperatorError {
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(
      pid === process.pid
        ? `data directory ${dir} is already open in this process. Close the other ` +
            `store first, or use another directory.`
        : `data directory ${dir} is in use by another pinbot process (pid ${pid}). ` +
            `Stop that process, or pass --data DIR to use another directory.`,
    );
    this.name = 'DataDirLockedError';
  }
}

/** Lock files held by this process: a second open in the same process must fail too. */
const heldHere = new Set<string>();

/** The content of a lock (or takeover claim) file: `PID TOKEN`. Internal. */
interface LockContent {
  pid: number;
  /** Random per acquisition; the lock is ours only while the file holds our token. */
  token: string;
  raw: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readContent(path: string): LockContent | undefined {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const [pidText = '', token = ''] = raw.trim().split(/\s+/);
  const pid = Number(pidText);
  return { pid: Number.isInteger(pid) && pid > 0 ? pid : 0, token, raw };
}

/**
 * Whether a lock (or claim) names a live process other than this one. A file naming our own
 * pid that this process does not hold is stale too: a restarted container often gets the same
 * pid. Internal.
 */
function live(c: LockContent, path: string): boolean {
  if (c.pid === 0) return false;
  if (c.pid === process.pid) return heldHere.has(path);
  return alive(c.pid);
}

/** A file-name-safe name for the lock a stale file holds. Internal. */
function lockId(c: LockContent): string {
  return /^[0-9a-f]{1,64}$/.test(c.token)
    ? `${c.pid}-${c.token}`
    : `${c.pid}-${Buffer.from(c.raw).toString('hex').slice(0, 32) || 'empty'}`;
}

/**
 * Replaces the stale lock `stale` at `path` with ours (`mine`, a complete file). Only one
 * process may replace a given stale lock: it must first create the claim file
 * `pinbot.lock.takeover-<lock id>-<n>` with an exclusive link, which exactly one racer wins.
 * A claim left by a dead claimer is passed by claiming n + 1. The winner checks that the lock
 * is still the stale one before renaming over it (only claimers replace a lock, never unlink
 * it, so nobody else can have changed it), then drops its claims.
 * Returns true when replaced, false when the lock changed meanwhile (look again); throws when a
 * live process holds the claim while the lock is still the stale one (it is taking the
 * directory).
 */
function takeOver(dir: string, path: string, stale: LockContent, mine: string): boolean {
  const claims: string[] = [];
  try {
    for (let n = 1; ; n++) {
      const claim = `${path}.takeover-${lockId(stale)}-${n}`;
      try {
        linkSync(mine, claim);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const other = readContent(claim);
        if (other && live(other, claim)) {
          // A live claimer whose stale lock is gone lost to an earlier one (it claimed after
          // the winner dropped its claims): look at the lock again, it names the holder.
          if (readContent(path)?.raw !== stale.raw) return false;
          throw new DataDirLockedError(dir, other.pid);
        }
        claims.push(claim); // dead claimer: its claim goes once we are done
        continue;
      }
      claims.push(claim);
      if (readContent(path)?.raw !== stale.raw) return false;
      // rename needs a name of its own: `mine` stays linked as the claim until cleaned up.
      const moving = `${mine}.in`;
      linkSync(mine, moving);
      renameSync(moving, path);
      return true;
    }
  } finally {
    for (const c of claims) rmSync(c, { force: true });
  }
}

/**
 * Takes `DIR/pinbot.lock` (one writer per data directory) and returns the release function.
 *
 * The lock file (`PID TOKEN`) is written complete under a temporary name and hard-linked into
 * place, so nobody sees a half-written lock and exactly one of several racers creates it. A
 * lock whose pid is dead (a crash, `kill -9`) is taken over through a claim only one racer can
 * win (see `takeOver`), never by deleting it: deleting let two racers each remove the other's
 * fresh lock, and 6 processes started together held one directory at once in 12 of 25 rounds.
 * After taking it, the lock is read back and must hold our token.
 *
 * @example
 * const release = acquireLock('./data');
 * try { ... } finally { release(); }
 */
export function acquireLock(dir: string): () => void {
  const path = resolve(join(dir, DATA_DIR.lock));
  if (heldHere.has(path)) throw new DataDirLockedError(dir, process.pid);
  const token = randomBytes(8).toString('hex');
  const mine = `${path}.${process.pid}.${token}`;
  writeFileSync(mine, `${process.pid} ${token}\n`, { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 20; attempt++) {
      let placed = false;
      try {
        linkSync(mine, path);
        placed = true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const current = readContent(path);
        if (!current) continue; // released meanwhile: try again
        if (live(current, path)) throw new DataDirLockedError(dir, current.pid);
        placed = takeOver(dir, path, current, mine);
      }
      if (placed && readContent(path)?.token === token) {
        heldHere.add(path);
        sweep(dir, path);
        return () => {
          heldHere.delete(path);
          // Remove only our own lock: never one a later process took over.
          if (readContent(path)?.token === token) rmSync(path, { force: true });
        };
      }
    }
  } finally {
    rmSync(mine, { force: true });
    rmSync(`${mine}.in`, { force: true });
  }
  throw new Error(`could not take the lock ${path}; remove it if no pinbot process runs on ${dir}`);
}

/**
 * Removes temporary lock files and claims left by dead processes. A file without a pid yet is
 * left alone: it may be another racer's, half written this instant. Internal.
 */
function sweep(dir: string, path: string): void {
  const base = `${path.slice(path.lastIndexOf('/') + 1)}.`;
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(base)) continue;
    const file = join(dir, name);
    const c = readContent(file);
    if (c && c.pid !== 0 && c.pid !== process.pid && !alive(c.pid)) rmSync(file, { force: true });
  }
}

/** The pid holding the lock of `dir`, if a live process other than this one holds it. */
export function lockHolder(dir: string): number | undefined {
  const path = resolve(join(dir, DATA_DIR.lock));
  const c = readContent(path);
  return c && c.pid !== process.pid && live(c, path) ? c.pid : undefined;
}
