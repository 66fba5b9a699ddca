import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case
/** The shape of an id made by `newId`: prefix, 9 time digits, 4 counter digits, 8 random. */
const ID_SHAPE = /^[a-z]+_([0-9a-hjkmnp-tv-z]{9})[0-9a-hjkmnp-tv-z]{4}[0-9a-v]{8}$/;

let lastTime = 0;
let counter = 0;

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
  return `${prefix}_${encode(lastTime, 9)}${encode(counter, 4)}${randomBytes(5).readUIntBE(0, 5).toString(32).padStart(8, '0')}`;
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
