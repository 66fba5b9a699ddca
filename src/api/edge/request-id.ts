import { randomFillSync } from 'node:crypto';

/** Ids made per fill of the pool. */
const POOL = 256;
/** Two hex digits of each byte, as character codes. */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const random = Buffer.alloc(16 * POOL);
const text = Buffer.alloc(36 * POOL);
let next = POOL;

/** Writes the text of POOL random (version 4) UUIDs into `text`, from one fill of `random`. */
function fill(): void {
  randomFillSync(random);
  for (let k = 0; k < POOL; k++) {
    const r = k * 16;
    random[r + 6] = (random[r + 6]! & 0x0f) | 0x40; // version 4
    random[r + 8] = (random[r + 8]! & 0x3f) | 0x80; // variant 10
    let at = k * 36;
    for (let i = 0; i < 16; i++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) text[at++] = 0x2d; // '-'
      const h = HEX[random[r + i]!]!;
      text[at++] = h.charCodeAt(0);
      text[at++] = h.charCodeAt(1);
    }
  }
  next = 0;
}

/**
 * A random (version 4) UUID, as `crypto.randomUUID()` gives it — the same format, the same
 * source of randomness (the system's CSPRNG) — as one flat string cut from text written 256 ids
 * at a time. node's own builds each id from twenty pieces (~640 bytes of short-lived strings a
 * call, then flattened when the head is written: ~45% of what pinbot allocated a `GET /me`,
 * `bench/tools/edge-micro.ts --alloc`); this allocates the id's 36 characters. Every id is used
 * once: the pool is refilled, never reread.
 */
export function requestId(): string {
  if (next === POOL) fill();
  const at = next++ * 36;
  return text.toString('latin1', at, at + 36);
}
