import { existsSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { Adapter } from 'lowdb';
import type { StoredRecord } from '../core/types.js';
import { DATA_FORMAT } from './data-format.js';
import { tmpName } from '../../util/data-dir.js';
import { OperatorError } from '../../util/operator-error.js';

/**
 * The `schema_version` this code writes: the data directory's format (data-format.ts). It reads
 * every version from 1 up to it.
 */
export const SCHEMA_VERSION = DATA_FORMAT;

/** The content of `db.json`. */
export interface Snapshot {
  schema_version: number;
  /** Sequence number of the last transaction the snapshot contains. */
  seq: number;
  collections: Record<string, StoredRecord[]>;
}

/** Thrown when `db.json` cannot be read; says what to do. */
export class SnapshotError extends OperatorError {
  constructor(file: string, why: string) {
    super(
      `${file} cannot be read (${why}). Restore it from a backup and keep the journal files (they continue it); ` +
        `do not move it aside: without it the store holds only what the journal holds, and refuses to start.`,
    );
    this.name = 'SnapshotError';
  }
}

/** Opens an fsync-able handle, runs `fn`, closes. Internal. */
export async function fsyncPath(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

const CHUNK = 1 << 20;
const READ_CHUNK = 1 << 20;

/**
 * The lines of a UTF-8 file, a chunk's worth at a time (`\n` or `\r\n` endings). Internal.
 * One await per megabyte rather than per line: readline's async iterator costs a promise and
 * an event per record, a visible share of start-up on 1M records (bench/startup).
 */
async function* lineChunks(file: string): AsyncGenerator<string[], void, undefined> {
  const fh = await open(file, 'r');
  const decoder = new StringDecoder('utf8');
  const buf = Buffer.allocUnsafe(READ_CHUNK);
  let rest = '';
  try {
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, READ_CHUNK, null);
      const text = rest + (bytesRead > 0 ? decoder.write(buf.subarray(0, bytesRead)) : decoder.end());
      const lines: string[] = [];
      let at = 0;
      for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', at)) {
        lines.push(text.charCodeAt(nl - 1) === 13 ? text.slice(at, nl - 1) : text.slice(at, nl));
        at = nl + 1;
      }
      rest = text.slice(at);
      if (bytesRead === 0) {
        if (rest !== '') lines.push(rest);
        yield lines;
        return;
      }
      yield lines;
    }
  } finally {
    await fh.close();
  }
}

/**
 * The lowdb adapter of `db.json`. It differs from lowdb's `JSONFile` in three ways that matter
 * for a database:
 * - durable: the temporary file is fsync'd before it is renamed over `db.json` and the
 *   directory is fsync'd after, so a power cut leaves the old or the new snapshot, never an
 *   empty file;
 * - streamed: records are written in 1 MB chunks, so a large store never builds one giant string
 *   (V8 strings stop at ~512 MB) and the event loop keeps serving requests meanwhile;
 * - one record per line: still plain JSON (readable, `jq`-able), but read back line by line.
 *   A file in any other JSON layout (edited by hand) is read with `JSON.parse` as a fallback.
 *
 * @example
 * const db = new Low(new SnapshotFile('data/db.json'), null);
 * await db.read();
 */
export class SnapshotFile implements Adapter<Snapshot | null> {
  constructor(readonly file: string) {}

  /** Size in bytes of the snapshot on disk (0 when there is none). */
  size(): number {
    return existsSync(this.file) ? statSync(this.file).size : 0;
  }

  async read(): Promise<Snapshot | null> {
    if (!existsSync(this.file)) return null;
    const streamed = await this.readLines();
    if (streamed) return streamed;
    try {
      return JSON.parse(readFileSync(this.file, 'utf8')) as Snapshot;
    } catch (err) {
      throw new SnapshotError(this.file, (err as Error).message);
    }
  }

  /** Reads the one-record-per-line layout; undefined when the file has another layout. */
  private async readLines(): Promise<Snapshot | undefined> {
    let snap: Snapshot | undefined;
    let current: StoredRecord[] | undefined;
    let ended = false;
    const chunks = lineChunks(this.file);
    try {
      for await (const chunk of chunks)
        for (const line of chunk) {
          if (!snap) {
            if (!line.startsWith('{"schema_version":') || !line.endsWith('"collections":{')) return undefined;
            snap = JSON.parse(line + '}}') as Snapshot;
            snap.collections = {};
          } else if (ended) {
            if (line.trim() !== '') return undefined;
          } else if (current) {
            if (line === ']' || line === '],') current = undefined;
            else current.push(JSON.parse(line.endsWith(',') ? line.slice(0, -1) : line) as StoredRecord);
          } else if (line === '}}') {
            ended = true;
          } else if (line.endsWith(':[')) {
            current = snap.collections[JSON.parse(line.slice(0, -2)) as string] = [];
          } else {
            return undefined;
          }
        }
    } catch {
      return undefined;
    } finally {
      await chunks.return(undefined);
    }
    return ended ? snap : undefined;
  }

  async write(snap: Snapshot | null): Promise<void> {
    if (!snap) throw new Error('SnapshotFile.write needs a snapshot');
    const tmp = join(dirname(this.file), tmpName(basename(this.file)));
    const fh = await open(tmp, 'w', 0o600);
    try {
      let buf = `{"schema_version":${JSON.stringify(
        snap.schema_version,
      )},"seq":${JSON.stringify(snap.seq)},"collections":{\n`;
      const flush = async () => {
        if (buf.length >= CHUNK) {
          await fh.writeFile(buf);
          buf = '';
        }
      };
      const names = Object.keys(snap.collections);
      for (const [i, name] of names.entries()) {
        buf += `${JSON.stringify(name)}:[\n`;
        const records = snap.collections[name]!;
        for (let j = 0; j < records.length; j++) {
          buf += JSON.stringify(records[j]) + (j < records.length - 1 ? ',\n' : '\n');
          await flush();
        }
        buf += i < names.length - 1 ? '],\n' : ']\n';
      }
      buf += '}}\n';
      await fh.writeFile(buf);
      await fh.sync();
    } catch (err) {
      await fh.close();
      rmSync(tmp, { force: true });
      throw err;
    }
    await fh.close();
    renameSync(tmp, this.file);
    await fsyncPath(dirname(this.file));
  }
}
