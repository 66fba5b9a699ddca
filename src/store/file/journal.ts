import {
  closeSync,
  copyFileSync,
  fsyncSync,
  openSync,
  readdirSync,
  readSync,
  statSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { decodeEntry, type JournalEntry, type LineProblem } from './journal-line.js';
import { JournalCorruptError } from '../core/errors.js';
import { DATA_DIR } from '../../util/data-dir.js';

export type { JournalEntry } from './journal-line.js';
export { JournalCorruptError } from '../core/errors.js';

const NL = 0x0a;

/** A file-name-safe UTC time stamp, e.g. `20261124T001500123Z`. Internal. */
export function stamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:.]/g, '');
}

/**
 * Copies `file` (from byte `from` on) to `FILE.damaged-<time>` and fsyncs it, unless an
 * identical copy is already there (a server restarted in a loop on a damaged journal must not
 * fill the disk with copies). Returns the copy's path.
 */
export function keepDamagedCopy(file: string, now: number, from = 0): string {
  const size = statSync(file).size - from;
  const prefix = `${basename(file)}${DATA_DIR.damagedSuffix}`;
  for (const name of readdirSync(dirname(file))) {
    if (!name.startsWith(prefix)) continue;
    const other = join(dirname(file), name);
    if (statSync(other).size === size && sameBytes(file, from, other)) return other;
  }
  const copy = `${file}${DATA_DIR.damagedSuffix}${stamp(now)}`;
  if (from === 0) copyFileSync(file, copy);
  else copyRange(file, from, copy);
  const fd = openSync(copy, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return copy;
}

/** Reads a file in chunks from `from`, calling `fn` with each. Internal. */
function chunks(file: string, from: number, fn: (chunk: Buffer) => void): void {
  const fd = openSync(file, 'r');
  const buf = Buffer.alloc(1 << 20);
  try {
    for (let pos = from; ; ) {
      const n = readSync(fd, buf, 0, buf.length, pos);
      if (n === 0) return;
      fn(buf.subarray(0, n));
      pos += n;
    }
  } finally {
    closeSync(fd);
  }
}

function copyRange(file: string, from: number, to: string): void {
  const out = openSync(to, 'wx', 0o600);
  try {
    chunks(file, from, (c) => writeSync(out, c));
  } finally {
    closeSync(out);
  }
}

function sameBytes(file: string, from: number, other: string): boolean {
  const parts: Buffer[] = [];
  chunks(file, from, (c) => parts.push(Buffer.from(c)));
  let at = 0;
  let same = true;
  const whole = Buffer.concat(parts);
  chunks(other, 0, (c) => {
    if (same && whole.compare(c, 0, c.length, at, at + c.length) !== 0) same = false;
    at += c.length;
  });
  return same && at === whole.length;
}

/** What a whole line that is not a valid entry means. Internal. */
const PROBLEMS: Record<Exclude<LineProblem, 'unreadable'>, string> = {
  'no checksum': 'the line has no checksum (written by hand, or by something other than pinbot)',
  'checksum mismatch':
    'the checksum does not match the line (it was changed after it was written, or the disk returns other bytes)',
  'not a journal entry': 'the line is JSON but not a journal entry',
};

/** What a replay found, for the sequence checks of the caller. */
export interface ReplayResult {
  /** Intact lines applied. */
  lines: number;
  firstSeq?: number;
  lastSeq?: number;
}

export interface ReplayOptions {
  warn: (msg: string, extra?: Record<string, unknown>) => void;
  /** Clock time in ms, for the name of the copy of a torn tail. */
  now: number;
}

/**
 * Reads a journal line by line (in 4 MB chunks, so its size is not bounded by V8's string
 * limit) and hands each intact entry to `apply` with its line number; `apply` may throw
 * (a `StoreDamagedError` naming `file:line`) to refuse the entry.
 *
 * A torn tail — the last line cut short (without its newline) or unreadable (zeros, garbage) —
 * is what a crash during an append leaves: that write was never acknowledged. Its bytes are
 * first copied to `FILE.damaged-<time>`, then cut off, and the cut is reported through `warn`.
 * Only the last line can be torn: an unreadable line followed by any other line (intact, or a
 * torn last one) was acknowledged, and so is damage, as is a whole JSON line without a checksum
 * or with the wrong one (wherever it is: a crash does not write those). Damage throws
 * `JournalCorruptError` (`file:line` and why).
 *
 * @example
 * replayJournal('data/journal.jsonl', (e, line) => engine.apply(e.c), { warn: console.warn, now: Date.now() });
 */
export function replayJournal(
  file: string,
  apply: (entry: JournalEntry, line: number) => void,
  { warn, now }: ReplayOptions,
): ReplayResult {
  const fd = openSync(file, 'r');
  const out: ReplayResult = { lines: 0 };
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
        const entry = decodeEntry(pending, start, nl);
        if (typeof entry === 'object') {
          if (badAt)
            throw new JournalCorruptError(
              `${file}:${badAt.line}`,
              `unreadable line, and later lines are intact, so this is not a write cut short by a crash`,
            );
          apply(entry, lineNo);
          out.lines++;
          out.firstSeq ??= entry.s;
          out.lastSeq = entry.s;
        } else if (entry !== 'unreadable') {
          throw new JournalCorruptError(`${file}:${lineNo}`, PROBLEMS[entry]);
        } else if (badAt) {
          throw new JournalCorruptError(
            `${file}:${badAt.line}`,
            `unreadable line, and it is not the last line (line ${lineNo} follows ` +
              `it), so it is not a write cut short by a crash`,
          );
        } else {
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
  if (pending.length > 0) {
    // a last line without its newline: torn, but then no line before it may be unreadable
    if (badAt)
      throw new JournalCorruptError(
        `${file}:${badAt.line}`,
        `unreadable line, and it is not the last line (a torn line ${lineNo + 1} ` +
          `follows it), so it is not a write cut short by a crash`,
      );
    badAt = { offset, line: lineNo + 1 };
  }
  if (badAt) {
    const copy = keepDamagedCopy(file, now, badAt.offset);
    warn(
      `${file}:${badAt.line}: dropped a torn tail (a write cut short by a crash, ` +
        `never acknowledged); its bytes are kept in ${copy}`,
      {
        file,
        line: badAt.line,
        offset: badAt.offset,
        copy,
      },
    );
    truncateSync(file, badAt.offset);
  }
  return out;
}
