import { crc32 } from 'node:zlib';
import type { Change } from '../core/types.js';

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

/** The value of a lower-case hex digit by byte, -1 for any other byte. Internal. */
const HEX = new Int8Array(256).fill(-1);
for (let i = 0; i < 16; i++) HEX['0123456789abcdef'.charCodeAt(i)] = i;

/**
 * The journal line of a transaction, newline included.
 *
 * @example encodeEntry(7, [['users', 'usr_1', { id: 'usr_1' }]]) // '{"k":"…","s":7,"c":[…]}\n'
 */
export function encodeEntry(s: number, c: Change[]): string {
  const body = JSON.stringify({ s, c }).slice(1);
  return `{"k":"${hex8(crc32(body))}",${body}\n`;
}

/** The lower-case hex digits, as bytes. Internal. */
const HEX_DIGITS = Buffer.from('0123456789abcdef');

/**
 * The same line as `encodeEntry`, as the bytes the journal gets: the JSON text is encoded once,
 * straight into the line, and the checksum is computed over those bytes. (The string form
 * hashed a string — converted to UTF-8 for the CRC — then built the line as a string that was
 * joined with the batch's others and converted to bytes again: ~1 kB of garbage and two UTF-8
 * conversions per write, bench/tools/write-core.ts.)
 *
 * @example encodeEntryBytes(7, changes).toString() === encodeEntry(7, changes)
 */
export function encodeEntryBytes(s: number, c: Change[]): Buffer {
  const json = JSON.stringify({ s, c }); // '{"s":…,"c":[…]}': the body is all of it after its '{'
  const length = HEAD - 1 + Buffer.byteLength(json) + 1;
  const line = Buffer.allocUnsafe(length);
  // the JSON goes in so that its '{' is the byte the head's ',' then takes
  line.write(json, HEAD - 1);
  line[length - 1] = 0x0a;
  const k = crc32(line.subarray(HEAD, length - 1));
  PREFIX.copy(line, 0);
  for (let i = 0; i < 8; i++) line[PREFIX.length + i] = HEX_DIGITS[(k >>> (28 - 4 * i)) & 15]!;
  line[HEAD - 2] = 0x22; // "
  line[HEAD - 1] = 0x2c; // ,
  return line;
}

/**
 * Why a line could not be read. A line that is whole JSON but has no checksum or the wrong one
 * was written complete and then changed (or by something else): damage wherever it is. Anything
 * else unreadable (a line cut short, zeros, garbage) may be a write a crash cut short: at the
 * tail of the journal it is dropped.
 */
export type LineProblem = 'no checksum' | 'checksum mismatch' | 'not a journal entry' | 'unreadable';

function parse(buf: Buffer, start: number, end: number, before = ''): JournalEntry | undefined {
  try {
    const e = JSON.parse(before + buf.toString('utf8', start, end)) as JournalEntry;
    return e && typeof e === 'object' ? e : undefined;
  } catch {
    return undefined;
  }
}

const isEntry = (e: JournalEntry | undefined): e is JournalEntry =>
  e !== undefined && Number.isSafeInteger(e.s) && e.s > 0 && Array.isArray(e.c);

/**
 * Reads the line `buf[start, end)` (no newline): the entry, or what is wrong with it.
 * The checksum is computed over the raw bytes, before any string is made.
 */
export function decodeEntry(buf: Buffer, start: number, end: number): JournalEntry | LineProblem {
  // Byte by byte, no strings made: this runs once per line at start-up (bench/startup).
  let ok = end - start >= HEAD + 2 && buf[start + HEAD - 2] === 0x22 && buf[start + HEAD - 1] === 0x2c;
  for (let i = 0; ok && i < PREFIX.length; i++) ok = buf[start + i] === PREFIX[i];
  if (!ok) return parse(buf, start, end) ? 'no checksum' : 'unreadable';
  let want = 0;
  for (let i = start + PREFIX.length; i < start + PREFIX.length + 8; i++) {
    const d = HEX[buf[i]!]!;
    if (d < 0) return parse(buf, start, end) ? 'checksum mismatch' : 'unreadable';
    want = want * 16 + d;
  }
  if (crc32(buf.subarray(start + HEAD, end)) !== want)
    return parse(buf, start, end) ? 'checksum mismatch' : 'unreadable';
  // The entry without its "k": objects of the old shape { s, c } parse a fifth faster.
  const e = parse(buf, start + HEAD, end, '{');
  if (isEntry(e)) return e;
  return e ? 'not a journal entry' : 'unreadable';
}
