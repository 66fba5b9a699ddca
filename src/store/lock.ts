import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';

/** Thrown when another live process (or this one) holds the data directory. */
export class DataDirLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(
      pid === process.pid
        ? `data directory ${dir} is already open in this process. Close the other store first, or use another directory.`
        : `data directory ${dir} is in use by another pinbot process (pid ${pid}). ` +
            `Stop that process, or pass --data DIR to use another directory.`,
    );
    this.name = 'DataDirLockedError';
  }
}

/** Lock files held by this process: a second open in the same process must fail too. */
const heldHere = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readPid(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes `DIR/pinbot.lock` (one writer per data directory) and returns the release function.
 * The lock file is written complete under a temporary name and then hard-linked into place, so
 * another process never sees an empty lock. A lock whose pid is dead (a crash, `kill -9`) is
 * taken over; so is one naming our own pid that this process does not hold (a restarted
 * container often gets the same pid).
 *
 * @example
 * const release = acquireLock('./data');
 * try { ... } finally { release(); }
 */
export function acquireLock(dir: string): () => void {
  const path = resolve(join(dir, 'pinbot.lock'));
  if (heldHere.has(path)) throw new DataDirLockedError(dir, process.pid);
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(tmp, `${process.pid}\n`, { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        linkSync(tmp, path);
        heldHere.add(path);
        return () => {
          heldHere.delete(path);
          // Remove only our own lock: never one a later process took over.
          if (readPid(path) === process.pid) rmSync(path, { force: true });
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const pid = readPid(path);
        if (pid !== undefined && pid !== process.pid && alive(pid)) throw new DataDirLockedError(dir, pid);
        // Dead, unreadable or recycled pid: the lock is stale.
        rmSync(path, { force: true });
      }
    }
  } finally {
    rmSync(tmp, { force: true });
  }
  throw new Error(`could not take the lock ${path}; remove it if no pinbot process runs on ${dir}`);
}

/** The pid holding the lock of `dir`, if a live process other than this one holds it. */
export function lockHolder(dir: string): number | undefined {
  const pid = readPid(join(dir, 'pinbot.lock'));
  return pid !== undefined && pid !== process.pid && alive(pid) ? pid : undefined;
}
