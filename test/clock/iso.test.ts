import { describe, expect, it } from 'vitest';
import { iso, utcDate } from '../../src/clock/clock.js';

/** A small deterministic generator (the same cases every run). */
function* times(n: number): Generator<number> {
  let x = 0x2545f491;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const unit = x / 2 ** 32;
    // half near today (several days either side), half anywhere a Date can hold
    yield i % 2 ? Math.floor(1795291200000 + (unit - 0.5) * 10 * 86_400_000) : Math.floor((unit * 2 - 1) * 8.64e15);
  }
}

describe('iso and utcDate write what Date writes', () => {
  const edges = [
    0,
    -1,
    1,
    999,
    1000,
    59_999,
    60_000,
    3_599_999,
    86_399_999,
    86_400_000,
    -86_400_000,
    -86_400_001,
    1795291200000,
    1795291199999,
    8.64e15,
    -8.64e15,
    8.64e15 - 1,
    -62198755200000,
    253402300799999,
    253402300800000,
  ];

  it.each(edges)('iso(%d)', (ms) => {
    expect(iso(ms)).toBe(new Date(ms).toISOString());
    expect(utcDate(ms)).toBe(new Date(ms).toISOString().slice(0, 10));
  });

  it('on 200,000 times near now and across the whole range, in an order that moves between days', () => {
    let mismatches = 0;
    for (const ms of times(200_000))
      if (iso(ms) !== new Date(ms).toISOString() || utcDate(ms) !== new Date(ms).toISOString().slice(0, 10))
        mismatches++;
    expect(mismatches).toBe(0);
  });

  it('times that are not whole milliseconds, or not times, as Date has them', () => {
    for (const ms of [1.5, -1.5, 0.999, -0.001, -1000, -0.5, -86_400_000]) {
      expect(iso(ms)).toBe(new Date(ms).toISOString());
      expect(utcDate(ms)).toBe(new Date(ms).toISOString().slice(0, 10));
    }
    for (const bad of [NaN, Infinity, 8.64e15 + 1]) {
      expect(() => iso(bad)).toThrow(RangeError);
      expect(() => utcDate(bad)).toThrow(RangeError);
    }
  });
});
