import { open } from 'node:fs/promises';
import { rmSync } from 'node:fs';
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

/**
 * The real file: `open(path, 'a', 0o600)`, appends continued until complete, real fdatasync.
 *
 * @example const f = await openAppendFile('data/journal.jsonl'); await f.append(buf); await f.sync();
 */
export const openAppendFile: OpenAppend = async (path) => {
  const fh = await open(path, 'a', 0o600);
  return {
    async append(data) {
      let done = 0;
      while (done < data.length) {
        const { bytesWritten } = await fh.write(data, done, data.length - done);
        if (bytesWritten <= 0) throw new Error(`${path} accepted no bytes`);
        done += bytesWritten;
      }
    },
    sync: () => fh.datasync(),
    truncate: (length) => fh.truncate(length),
    size: async () => (await fh.stat()).size,
    close: () => fh.close(),
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
