import { open } from 'node:fs/promises';
import { fdatasync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DATA_DIR } from '../../util/data-dir.js';

/**
 * The file operations the store's writer needs, behind one seam: the real one below, and in
 * tests a wrapper that fails like a full disk (ENOSPC) for a while. Every write the store makes
 * while running — journal appends and the test write that probes whether the disk took writes
 * again — goes through it.
 */
export interface AppendFile {
  /** Appends `data` in full (a short write is continued), or throws. */
  append(data: Buffer): Promise<void>;
  /** fdatasync. */
  sync(): Promise<void>;
  /** Cuts the file to `length` bytes (a partial append is taken back). */
  truncate(length: number): Promise<void>;
  size(): Promise<number>;
  close(): Promise<void>;
}

/** Opens a file for appending, creating it (mode 0600). */
export type OpenAppend = (path: string) => Promise<AppendFile>;

/** An append that is done. Internal. */
const DONE: Promise<void> = Promise.resolve();

/**
 * The real file: `open(path, 'a', 0o600)`, appends continued until complete, real fdatasync.
 * An append is written at once (`writeSync`: to the page cache, what pino does for its log
 * files too); fdatasync, which waits for the disk, goes through the thread pool. Syncs use the
 * callback API on the handle's descriptor: FileHandle's promise
 * methods made ~3.5 kB of garbage per append + sync (three async layers per call), paid per
 * group commit — with a few writes per fdatasync, a third of a write's garbage
 * (bench/tools/write-core.ts --concurrency 1). `close()` waits for those in flight, as
 * FileHandle's does, so a descriptor is never written after it was closed (and reused).
 *
 * @example const f = await openAppendFile('data/journal.jsonl'); await f.append(buf); await f.sync();
 */
export const openAppendFile: OpenAppend = async (path) => {
  const fh = await open(path, 'a', 0o600);
  const fd = fh.fd;
  let inflight = 0;
  let idle: (() => void) | undefined;
  let closed: Promise<void> | undefined;
  const settled = () => {
    if (--inflight === 0 && idle) idle();
  };
  // after close the descriptor's number may belong to another file: refuse, never write to it
  const refuse = () => Promise.reject(Object.assign(new Error(`${path}: the file is closed`), { code: 'EBADF' }));
  // one write(2) at once, not a round trip through the thread pool: a group commit's lines go
  // to the page cache in microseconds, and on a server pinned to one CPU the pool's thread took
  // the main thread's core twice per commit (the append, then the fdatasync), one of them now
  const append = (data: Buffer): Promise<void> => {
    try {
      let done = 0;
      while (done < data.length) {
        const n = writeSync(fd, data, done, data.length - done, null);
        if (n <= 0) throw new Error(`${path} accepted no bytes`);
        done += n;
      }
      return DONE;
    } catch (err) {
      return Promise.reject(err);
    }
  };
  const sync = () =>
    new Promise<void>((resolve, reject) => {
      inflight++;
      fdatasync(fd, (err) => {
        settled();
        if (err) reject(err);
        else resolve();
      });
    });
  return {
    append: (data) => (closed ? refuse() : append(data)),
    sync: () => (closed ? refuse() : sync()),
    truncate: (length) => fh.truncate(length),
    size: async () => (await fh.stat()).size,
    close: () =>
      (closed ??= (async () => {
        if (inflight > 0) await new Promise<void>((resolve) => (idle = resolve));
        await fh.close();
      })()),
  };
};

/** Bytes of the test write that tells whether the disk takes writes again. */
const PROBE_BYTES = 64 * 1024;

/** Checks with a test write of 64 kB, synced, that the disk of `dir` takes writes (throws when not). */
export async function probeWrites(dir: string, openAppend: OpenAppend): Promise<void> {
  const probePath = join(dir, DATA_DIR.writeProbe);
  const probe = await openAppend(probePath);
  try {
    await probe.append(Buffer.alloc(PROBE_BYTES, 0x0a));
    await probe.sync();
  } finally {
    await probe.close().catch(() => undefined);
    rmSync(probePath, { force: true });
  }
}
