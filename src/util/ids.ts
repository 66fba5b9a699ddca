import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case
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

/** The next 40 random bits, as a number. Internal. */
function random40(): number {
  if (poolAt === POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const n = pool.readUIntBE(poolAt, 5);
  poolAt += 5;
  return n;
}

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
  const c = counter;
  // the counter's 4 digits without a string per digit step (encode builds one per digit)
  const counterText = ALPHABET[c >>> 15]! + ALPHABET[(c >>> 10) & 31]! + ALPHABET[(c >>> 5) & 31]! + ALPHABET[c & 31]!;
  return `${prefix}_${timeText}${counterText}${random40().toString(32).padStart(8, '0')}`;
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
  if (t !== undefined && t > lastTime) {
    lastTime = t;
    counter = 32 ** 4 - 1; // the next id moves to t + 1 ms: it must sort after every id of t
  }
}
