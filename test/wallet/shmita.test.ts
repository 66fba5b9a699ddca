import { describe, expect, it } from 'vitest';
import { nextShmita } from '../../src/domain/wallet/shmita.js';

// Shmita years 5782 (2021-09-07 … 2022-09-25), 5789 (2028-09-21 … 2029-09-09),
// 5796 (2035-09-04 … 2036-09-21), 5803 (2042-09-15 … 2043-10-04).
describe('nextShmita: 29 Elul of the next (or current) Shmita year', () => {
  it.each([
    ['2020-06-01', '2022-09-25', 'before 5782'],
    ['2021-09-06', '2022-09-25', '29 Elul 5781, the eve of 5782'],
    ['2021-09-07', '2022-09-25', '1 Tishrei 5782, first day of the Shmita year'],
    ['2022-01-15', '2022-09-25', 'inside 5782'],
    ['2022-09-25', '2022-09-25', '29 Elul 5782, the day itself'],
    ['2022-09-26', '2029-09-09', '1 Tishrei 5783, the day after'],
    ['2026-01-01', '2029-09-09', 'any date in 2026'],
    ['2026-11-21', '2029-09-09', 'the issue example'],
    ['2026-12-31', '2029-09-09', 'any date in 2026'],
    ['2028-09-21', '2029-09-09', '1 Tishrei 5789'],
    ['2029-03-01', '2029-09-09', 'inside 5789'],
    ['2029-09-09', '2029-09-09', '29 Elul 5789, the day itself'],
    ['2029-09-10', '2036-09-21', '1 Tishrei 5790, the day after'],
    ['2035-09-03', '2036-09-21', '29 Elul 5795'],
    ['2036-02-29', '2036-09-21', 'inside 5796, a leap day'],
    ['2036-09-21', '2036-09-21', '29 Elul 5796, the day itself'],
    ['2036-09-22', '2043-10-04', '1 Tishrei 5797, the day after'],
  ])('%s → %s (%s)', (date, expected) => {
    expect(nextShmita(date)).toBe(expected);
  });

  it('does not depend on the process time zone', () => {
    const tz = process.env.TZ;
    try {
      for (const zone of ['Pacific/Kiritimati', 'Pacific/Pago_Pago', 'UTC']) {
        process.env.TZ = zone;
        expect(nextShmita('2029-09-09')).toBe('2029-09-09');
        expect(nextShmita('2029-09-10')).toBe('2036-09-21');
      }
    } finally {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    }
  });
});
