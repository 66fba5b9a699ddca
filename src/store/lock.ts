import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Thrown when another live process holds the data directory. */
export class DataDirLockedError extends Error {
  constructor(readonly dir: string, readonly pid: number) {
    super(
      `data directory ${dir} is in use by another pinbot process (pid ${pid}). ` +
        `Stop that process, or pass --data DIR to use another directory.`,
    );
    this.name = 'DataDirLockedError';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes `DIR/pinbot.lock` (one writer per data directory). A lock left by a dead process is
 * taken over. Returns the release function.
 */
export function acquireLock(dir: string): () => void {
  const path = join(dir, 'pinbot.lock');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
        throw new DataDirLockedError(dir, pid);
      }
      rmSync(path, { force: true });
    }
  }
  throw new Error(`could not take the lock ${path}; remove it if no pinbot process runs`);
}

/** The pid holding the lock of `dir`, if a live process holds it. */
export function lockHolder(dir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dir, 'pinbot.lock'), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 && alive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}
