import { randomFillSync } from 'node:crypto';
import { fillRandom, seededSource } from './random.js';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case
/** Character codes of the time and counter digits (ALPHABET) and of the random ones (radix 32: 0-9a-v). */
const DIGIT = Array.from(ALPHABET, (ch) => ch.charCodeAt(0));
const RADIX32 = Array.from('0123456789abcdefghijklmnopqrstuv', (ch) => ch.charCodeAt(0));
/** The shape of an id made by `newId`: prefix, 9 time digits, 4 counter digits, 8 random. */
const ID_SHAPE = /^[a-z]+_([0-9a-hjkmnp-tv-z]{9})[0-9a-hjkmnp-tv-z]{4}[0-9a-v]{8}$/;

let lastTime = 0;
let counter = 0;
/** `encode(lastTime, 9)`, made again only when the millisecond changes. */
let timeText = '';
let timeTextOf = -1;

/**
 * Random bytes for the ids' 40 random bits, drawn from the system's CSPRNG a block at a time:
 * a `randomBytes(5)` per id was a call into C++ and a Buffer per id (1.5% of the write bench's
 * CPU, and the largest single cost of generating data sets). Each byte is used once, so the
 * ids are as unpredictable as before. 4,095 bytes: 819 ids per refill.
 */
const POOL_BYTES = 819 * 5;
const pool = Buffer.alloc(POOL_BYTES);
let poolAt = POOL_BYTES;

/** Encodes a non-negative integer in base32 with a fixed width. Internal. */
function encode(n: number, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = ALPHABET[n % 32] + out;
    n = Math.floor(n / 32);
  }
  return out;
}

/**
 * A time-sortable opaque id with a type prefix, e.g. `txn_01hx…`.
 * Ids made by one process sort in creation order (a counter breaks ties within a millisecond),
 * which the store's indexes rely on for "newest first" and `before` paging.
 *
 * @example newId('usr') // 'usr_1m7zdtxew0000585cm228'
 */
export function newId(prefix: string): string {
  const seeded = seededSource();
  if (seeded) return seededId(prefix, seeded);
  const now = Date.now();
  if (now > lastTime) {
    lastTime = now;
    counter = 0;
  } else {
    counter++;
    if (counter >= 32 ** 4) {
      lastTime++;
      counter = 0;
    }
  }
  if (timeTextOf !== lastTime) {
    timeText = encode(lastTime, 9);
    timeTextOf = lastTime;
  }
  if (poolAt === POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const p = pool;
  const at = poolAt;
  poolAt += 5;
  const b0 = p[at]!;
  const b1 = p[at + 1]!;
  const b2 = p[at + 2]!;
  const b3 = p[at + 3]!;
  const b4 = p[at + 4]!;
  const c = counter;
  // The 4 counter digits and the 8 random ones (40 bits, most significant first: what
  // `n.toString(32).padStart(8, '0')` gave) in one string: a string per digit, and toString's
  // runtime call, cost twice the time of the rest of newId.
  const tail = String.fromCharCode(
    DIGIT[c >>> 15]!,
    DIGIT[(c >>> 10) & 31]!,
    DIGIT[(c >>> 5) & 31]!,
    DIGIT[c & 31]!,
    RADIX32[b0 >>> 3]!,
    RADIX32[((b0 & 7) << 2) | (b1 >>> 6)]!,
    RADIX32[(b1 >>> 1) & 31]!,
    RADIX32[((b1 & 1) << 4) | (b2 >>> 4)]!,
    RADIX32[((b2 & 15) << 1) | (b3 >>> 7)]!,
    RADIX32[(b3 >>> 2) & 31]!,
    RADIX32[((b3 & 3) << 3) | (b4 >>> 5)]!,
    RADIX32[b4 & 31]!,
  );
  return prefix + '_' + timeText + tail;
}

/**
 * An id of a seeded run (util/random.ts): the same shape, its time from the run's own clock
 * and its random digits from the run's generator, so a run with the same seed repeats them.
 * Internal.
 */
function seededId(prefix: string, s: NonNullable<ReturnType<typeof seededSource>>): string {
  const now = s.now();
  if (now > s.idTime) {
    s.idTime = now;
    s.idCounter = 0;
  } else if (++s.idCounter >= 32 ** 4) {
    s.idTime++;
    s.idCounter = 0;
  }
  const b = fillRandom(Buffer.alloc(5));
  const n = b[0]! * 2 ** 32 + b.readUInt32BE(1);
  return `${prefix}_${encode(s.idTime, 9)}${encode(s.idCounter, 4)}${n.toString(32).padStart(8, '0')}`;
}

/** The creation time (ms) encoded in an id made by `newId`; undefined for any other string. */
export function idTime(id: string): number | undefined {
  const m = ID_SHAPE.exec(id);
  if (!m) return undefined;
  let t = 0;
  for (const ch of m[1]!) t = t * 32 + ALPHABET.indexOf(ch);
  return t;
}

/**
 * Makes ids created from now on sort after `id` (used after loading a store, in case the
 * system clock went back). Ids of another shape (e.g. content hashes) are ignored.
 */
export function observeId(id: string): void {
  const t = idTime(id);
  const seeded = seededSource();
  if (seeded && t !== undefined && t > seeded.idTime) {
    seeded.idTime = t;
    seeded.idCounter = 32 ** 4 - 1;
  }
  if (t !== undefined && t > lastTime) {
    lastTime = t;
    counter = 32 ** 4 - 1; // the next id moves to t + 1 ms: it must sort after every id of t
  }
}
