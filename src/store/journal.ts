import { closeSync, openSync, readSync, truncateSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { Change } from './types.js';

/** One journal line: the sequence number of a transaction and its change set. */
export interface JournalEntry {
  s: number;
  c: Change[];
}

/** Thrown when a journal is damaged somewhere other than its tail. */
export class JournalCorruptError extends Error {
  constructor(file: string, line: number) {
    super(
      `${file}:${line} is corrupt and later lines are intact, so this is not a write cut short by a crash. ` +
        `Restore the data directory from a backup, or move the journal aside to start from the last snapshot.`,
    );
    this.name = 'JournalCorruptError';
  }
}

function parseEntry(line: string): JournalEntry | undefined {
  try {
    const e = JSON.parse(line) as JournalEntry;
    return e && Number.isInteger(e.s) && Array.isArray(e.c) ? e : undefined;
  } catch {
    return undefined;
  }
}

const NL = 0x0a;

/**
 * Reads a journal line by line (in 4 MB chunks, so its size is not bounded by V8's string
 * limit) and hands each entry to `apply`. A damaged tail — a last line without its newline, or
 * unparsable lines (garbage, zeros) after the last good one — is what a crash during an append
 * leaves: that write was never acknowledged, so it is cut off and reported through `warn`.
 * Damage followed by good lines throws `JournalCorruptError`.
 *
 * @example
 * replayJournal('data/journal.jsonl', (e) => engine.apply(e.c), console.warn);
 */
export function replayJournal(file: string, apply: (entry: JournalEntry) => void, warn: (msg: string, extra?: Record<string, unknown>) => void): void {
  const fd = openSync(file, 'r');
  let badAt: { offset: number; line: number } | undefined;
  let offset = 0; // file offset of the start of `pending`
  let lineNo = 0;
  let pending = Buffer.alloc(0);
  const chunk = Buffer.alloc(4 << 20);
  try {
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      pending = pending.length ? Buffer.concat([pending, chunk.subarray(0, n)]) : Buffer.from(chunk.subarray(0, n));
      let start = 0;
      for (let nl = pending.indexOf(NL, start); nl !== -1; nl = pending.indexOf(NL, start)) {
        lineNo++;
        const entry = parseEntry(pending.toString('utf8', start, nl));
        if (entry) {
          if (badAt) throw new JournalCorruptError(file, badAt.line);
          apply(entry);
        } else if (!badAt) {
          badAt = { offset: offset + start, line: lineNo };
        }
        start = nl + 1;
      }
      offset += start;
      pending = pending.subarray(start);
    }
  } finally {
    closeSync(fd);
  }
  if (pending.length > 0 && !badAt) badAt = { offset, line: lineNo + 1 };
  if (badAt) {
    warn(`${file}:${badAt.line}: dropped a torn tail (a write cut short by a crash, never acknowledged)`, { file, line: badAt.line, offset: badAt.offset });
    truncateSync(file, badAt.offset);
  }
}

/** Appends `data` in full (a short write is continued, never silently dropped). Internal. */
export async function appendAll(fh: FileHandle, data: Buffer): Promise<void> {
  let done = 0;
  while (done < data.length) {
    const { bytesWritten } = await fh.write(data, done, data.length - done);
    if (bytesWritten <= 0) throw new Error('the journal accepted no bytes');
    done += bytesWritten;
  }
}
