import { crc32 } from 'node:zlib';
import type { Change } from './types.js';

/** One journal line: the sequence number of a transaction and its change set. */
export interface JournalEntry {
  s: number;
  c: Change[];
}

/**
 * A journal line is `{"k":"<crc32 hex>","s":<seq>,"c":[…]}`: still one JSON object (jq reads
 * it), with the CRC-32 of everything after `{"k":"xxxxxxxx",` — the sequence number and the
 * change set — in front. CRC-32 catches torn writes, bit rot and hand edits; it is not a
 * signature (anyone who can write the data directory can also recompute it).
 */
const PREFIX = Buffer.from('{"k":"');
/** `{"k":"` + 8 hex digits + `",` */
const HEAD = PREFIX.length + 8 + 2;

const hex8 = (n: number) => n.toString(16).padStart(8, '0');

/**
 * The journal line of a transaction, newline included.
 *
 * @example encodeEntry(7, [['users', 'usr_1', { id: 'usr_1' }]]) // '{"k":"…","s":7,"c":[…]}\n'
 */
export function encodeEntry(s: number, c: Change[]): string {
  const body = JSON.stringify({ s, c }).slice(1);
  return `{"k":"${hex8(crc32(body))}",${body}\n`;
}

/**
 * Why a line could not be read. A line that is whole JSON but has no checksum or the wrong one
 * was written complete and then changed (or by something else): damage wherever it is. Anything
 * else unreadable (a line cut short, zeros, garbage) may be a write a crash cut short: at the
 * tail of the journal it is dropped.
 */
export type LineProblem = 'no checksum' | 'checksum mismatch' | 'not a journal entry' | 'unreadable';

function parse(buf: Buffer, start: number, end: number): JournalEntry | undefined {
  try {
    const e = JSON.parse(buf.toString('utf8', start, end)) as JournalEntry;
    return e && typeof e === 'object' ? e : undefined;
  } catch {
    return undefined;
  }
}

const isEntry = (e: JournalEntry | undefined): e is JournalEntry => e !== undefined && Number.isSafeInteger(e.s) && e.s > 0 && Array.isArray(e.c);

/**
 * Reads the line `buf[start, end)` (no newline): the entry, or what is wrong with it.
 * The checksum is computed over the raw bytes, before any string is made.
 */
export function decodeEntry(buf: Buffer, start: number, end: number): JournalEntry | LineProblem {
  if (end - start < HEAD + 2 || buf.compare(PREFIX, 0, PREFIX.length, start, start + PREFIX.length) !== 0 || buf[start + HEAD - 2] !== 0x22 || buf[start + HEAD - 1] !== 0x2c) {
    return parse(buf, start, end) ? 'no checksum' : 'unreadable';
  }
  const want = parseInt(buf.toString('latin1', start + PREFIX.length, start + PREFIX.length + 8), 16);
  if (!(want >= 0) || crc32(buf.subarray(start + HEAD, end)) !== want) return parse(buf, start, end) ? 'checksum mismatch' : 'unreadable';
  const e = parse(buf, start, end);
  if (isEntry(e)) return e;
  return e ? 'not a journal entry' : 'unreadable';
}
