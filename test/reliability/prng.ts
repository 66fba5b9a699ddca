/**
 * A small seeded PRNG (mulberry32) for the crash loop's schedule: which client does what, and
 * when the kill lands. Same seed, same choices (TigerBeetle's simulator is seeded the same way),
 * so a failing run can be replayed with `--seed`.
 *
 * @example
 * const rnd = prng(42);
 * rnd.int(50, 300); // a burst length in ms
 */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    /** An integer in [min, max]. */
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(arr: readonly T[]): T => arr[Math.floor(next() * arr.length)]!,
    chance: (p: number) => next() < p,
  };
}

export type Prng = ReturnType<typeof prng>;
