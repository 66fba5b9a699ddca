import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case

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
 * @example newId('usr') // 'usr_0jq8v3k5w4a0007r3f9'
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

/** Makes ids created from now on sort after `id` (used after loading a store). */
export function observeId(id: string): void {
  const body = id.slice(id.indexOf('_') + 1, id.indexOf('_') + 10);
  let t = 0;
  for (const ch of body) t = t * 32 + ALPHABET.indexOf(ch);
  if (t > lastTime) {
    lastTime = t;
    counter = 0;
  }
}
