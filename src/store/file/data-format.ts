import {
  closeSync,
  cpSync,
  existsSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { DataFormatError } from '../core/errors.js';
import { stamp } from './journal.js';
import { DATA_DIR, tmpName } from '../../util/data-dir.js';

/**
 * The format of a data directory this pinbot reads and writes. It is recorded twice: in the
 * file `format` of the directory (`{"format":2}`, for operators and for directories that hold
 * only a journal yet) and as `schema_version` in `db.json` (so a pinbot from before formats
 * were recorded, which reads version 1 only, refuses a newer snapshot instead of misreading it).
 *
 * Formats: 1 — before formats were recorded (no `format` file, db.json `schema_version` 1);
 * 2 — the same records, with the format recorded. A later format that changes the records adds
 * its step to the migration (FileStore.open): load the older format, write the new one.
 */
export const DATA_FORMAT = 2;

/** What a data directory holds. */
export interface FoundFormat {
  /** Its format (1 for a directory written before formats were recorded). */
  format: number;
  /** No store files yet: a new directory, written in this pinbot's format from the start. */
  fresh: boolean;
  /** The `format` file is there. */
  recorded: boolean;
}

/** Files of a store: a directory holding none of them is new. Internal. */
const STORE_FILE = /^(db\.json|journal(\.old(\.\d+)?)?\.jsonl)$/;

/**
 * The format of the data directory `dir`; throws a `DataFormatError` when it is newer than this
 * pinbot reads, or when the `format` file is not one.
 *
 * @example readDataFormat('./data') // { format: 1, fresh: false, recorded: false }
 */
export function readDataFormat(dir: string): FoundFormat {
  const file = join(dir, DATA_DIR.format);
  if (!existsSync(file)) {
    const fresh = !readdirSync(dir).some((name) => STORE_FILE.test(name));
    return { format: fresh ? DATA_FORMAT : 1, fresh, recorded: false };
  }
  let format: unknown;
  try {
    format = (JSON.parse(readFileSync(file, 'utf8')) as { format?: unknown }).format;
  } catch (err) {
    throw new DataFormatError(
      `${file} is not a data format record (${(err as Error).message}): it holds ` +
        `{"format":${DATA_FORMAT}} — restore it from a backup of this directory`,
    );
  }
  if (!Number.isSafeInteger(format) || (format as number) < 1)
    throw new DataFormatError(
      `${file}: "format" is ${JSON.stringify(format)}, not a whole number ≥ 1 — ` +
        `restore it from a backup of this directory`,
    );
  checkFormat(format as number, dir);
  return { format: format as number, fresh: false, recorded: true };
}

/** Throws a `DataFormatError` for a format newer than this pinbot's. `where` names the directory or file. */
export function checkFormat(format: number, where: string): void {
  if (format <= DATA_FORMAT) return;
  throw new DataFormatError(
    `${where} holds data format ${format}, written by a newer pinbot; this one reads formats up to ${DATA_FORMAT}. ` +
      (`Install the newer pinbot again (npm install pinbot@latest), or start this one ` +
        `on a backup taken before the upgrade (data/backup-format-${DATA_FORMAT}-*)`),
  );
}

/** Records this pinbot's format in `dir` (written whole or not at all). */
export function writeDataFormat(dir: string): void {
  const tmp = join(dir, tmpName(DATA_DIR.format));
  writeFileSync(tmp, JSON.stringify({ format: DATA_FORMAT }) + '\n', { mode: 0o600 });
  fsyncFile(tmp);
  renameSync(tmp, join(dir, DATA_DIR.format));
  fsyncFile(dir);
}

/** Left out of a backup: the lock and socket of the running process, earlier backups, temporary files. Internal. */
const notCopied = (name: string) =>
  name.startsWith(DATA_DIR.lock) ||
  name === DATA_DIR.socket ||
  name === DATA_DIR.writeProbe ||
  /^\.[^/]*\.tmp$/.test(name) ||
  name.replace(/^\./, '').startsWith(DATA_DIR.backupPrefix);

/**
 * Copies the data directory `dir` (as format `from`) to `dir/backup-format-<from>-<time>/`
 * before a migration, durably: files are fsync'd, and the copy is made under a temporary name
 * and renamed, so a directory of that name is always a whole copy. Returns its path.
 *
 * @example keepFormatBackup('./data', 1, clock.now()) // './data/backup-format-1-20261126T040000000Z'
 */
export function keepFormatBackup(dir: string, from: number, now: number): string {
  const name = `${DATA_DIR.backupPrefix}${from}-${stamp(now)}`;
  const tmp = join(dir, tmpName(name));
  rmSync(tmp, { recursive: true, force: true });
  try {
    mkdirSync(tmp, { mode: 0o700 });
    // sockets and pipes are not data; the lock and earlier backups are not this directory's
    const keep = (src: string) => !notCopied(basename(src)) && isFileOrDir(src);
    // entry by entry: Node refuses to copy a directory into a folder inside itself
    for (const entry of readdirSync(dir)) {
      const src = join(dir, entry);
      if (keep(src)) cpSync(src, join(tmp, entry), { recursive: true, filter: keep });
    }
    fsyncTree(tmp);
    const path = join(dir, name);
    renameSync(tmp, path);
    fsyncFile(dir);
    return path;
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

function isFileOrDir(path: string): boolean {
  const s = lstatSync(path);
  return s.isFile() || s.isDirectory();
}

function fsyncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function fsyncTree(dir: string): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) fsyncTree(join(dir, e.name));
    else fsyncFile(join(dir, e.name));
  }
  fsyncFile(dir);
}

/**
 * Opens the store of a data directory in the current format: a fresh directory gets its
 * `format` file; an older one is first copied aside whole (so the upgrade can be undone by
 * hand), then `upgrade` rewrites it (the store's snapshot, in this format), then its format is
 * recorded. A failed open or upgrade removes the copy: it changed nothing.
 */
export async function openInFormat<S>(
  dir: string,
  now: number,
  o: {
    open: () => Promise<S>;
    upgrade: (store: S) => Promise<void>;
    warn: (msg: string, extra?: Record<string, unknown>) => void;
  },
): Promise<S> {
  let backup: string | undefined;
  try {
    const found = readDataFormat(dir);
    if (found.fresh) writeDataFormat(dir);
    if (found.format < DATA_FORMAT) backup = keepFormatBackup(dir, found.format, now);
    const store = await o.open();
    if (found.format < DATA_FORMAT) {
      // the snapshot is written in this format and the journal cut; then the format is recorded
      await o.upgrade(store);
      writeDataFormat(dir);
      o.warn(
        `upgraded the data directory ${dir} from format ${found.format} to ` +
          `${DATA_FORMAT}; a copy as it was is kept in ${backup}`,
        { backup },
      );
    } else if (!found.recorded) writeDataFormat(dir);
    return store;
  } catch (err) {
    if (backup) rmSync(backup, { recursive: true, force: true });
    throw err;
  }
}
