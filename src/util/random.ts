import { AsyncLocalStorage } from 'node:async_hooks';
import { randomFillSync, randomInt } from 'node:crypto';

/**
 * Where the randomness of PINs, ids and API keys comes from: the system's CSPRNG — except
 * inside `withSeed`, where a seeded generator gives the same values on every run (a scenario's
 * `--seed`). The seeded source is carried by the async context (AsyncLocalStorage), so
 * scenarios running concurrently in one process each get their own sequence, and the work they
 * start (an embedded server's requests, its bots, its timers) inherits it.
 *
 * Seeded values are predictable by design: only throwaway scenario servers use them.
 */
export interface SeededSource {
  readonly seed: number;
  /** The next 32 random bits. */
  next(): number;
  /** The time seeded ids carry (the scenario's virtual clock once it is set). */
  now: () => number;
  /** newId's time and counter, per source. Internal. */
  idTime: number;
  idCounter: number;
}

const context = new AsyncLocalStorage<SeededSource>();
/** How many `withSeed` calls are running: none (the usual case) costs nothing per value. */
let active = 0;

/** sfc32 seeded from a 32-bit seed (splitmix32 to spread it). Internal. */
function generator(seed: number): () => number {
  let s = seed >>> 0;
  const mix = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = mix();
  let b = mix();
  let c = mix();
  let d = mix();
  return () => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t;
  };
}

/**
 * Runs `fn` with seeded PINs, ids and keys: everything it starts draws from one generator.
 *
 * @example await withSeed(42, () => runTheScenario());
 */
export async function withSeed<T>(seed: number, fn: (source: SeededSource) => Promise<T>): Promise<T> {
  const source: SeededSource = { seed, next: generator(seed), now: () => 0, idTime: 0, idCounter: 0 };
  active++;
  try {
    return await context.run(source, () => fn(source));
  } finally {
    active--;
  }
}

/** The seeded source of the current async context, if any. */
export function seededSource(): SeededSource | undefined {
  return active === 0 ? undefined : context.getStore();
}

/** A random integer in [0, n) (n ≤ 2^32). */
export function randomBelow(n: number): number {
  const s = seededSource();
  if (!s) return randomInt(n);
  // rejection sampling: no bias towards small values
  const limit = Math.floor(0x1_0000_0000 / n) * n;
  for (;;) {
    const v = s.next();
    if (v < limit) return v % n;
  }
}

/** Fills `buf` with random bytes and returns it. */
export function fillRandom(buf: Buffer): Buffer {
  const s = seededSource();
  if (!s) return randomFillSync(buf);
  for (let i = 0; i < buf.length; i += 4) {
    const v = s.next();
    for (let k = 0; k < 4 && i + k < buf.length; k++) buf[i + k] = (v >>> (k * 8)) & 255;
  }
  return buf;
}
