import { describe, expect, it } from 'vitest';
import { figureLine, median } from '../../bench/harness/figure.js';
import type { LoadResult } from '../../bench/harness/load-spec.js';
import { throughputFigure } from '../../bench/harness/rounds.js';

const run = (rps: number, extra: Partial<LoadResult> = {}): LoadResult => ({
  rps,
  p50: 10,
  p99: 50,
  total: rps * 4,
  non2xx: 0,
  errors: 0,
  timeouts: 0,
  statusCodes: { '200': rps * 4 },
  ...extra,
});

describe('bench figures', () => {
  it('takes medians of odd and even lists', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('is the median of the round-by-round ratios, not the ratio of medians', () => {
    // Round 2 ran on a slow machine for both sides: its ratio is still 0.8.
    const a = [run(800), run(200), run(700)];
    const b = [run(1000), run(250), run(1400)];
    const f = throughputFigure('x', 'x', a, { name: 'base', runs: b, min: 0.7 });
    expect(f.ratio).toBeCloseTo(0.8);
    expect(f.rps).toBe(700);
    expect(f.pass).toBe(true);
    expect(f.note).toBe('rounds 0.80 0.80 0.50');
    expect(figureLine(f)).toContain('| 0.80× | base | ≥ 0.7× | ok |');
  });

  it('fails a figure whose runs had errors or non-2xx answers, however fast', () => {
    const a = [run(5000), run(5000, { non2xx: 3, statusCodes: { '200': 100, '429': 3 } }), run(5000)];
    const f = throughputFigure('x', 'x', a, { name: 'base', runs: [run(1000), run(1000), run(1000)], min: 0.7 });
    expect(f.ratio).toBe(5);
    expect(f.pass).toBe(false);
    expect(f.note).toMatch(/^INVALID: 0 errors \(0 timeouts\), 3 non-2xx \(3×429\)/);
    expect(figureLine(f)).toContain('MISSED');
  });
});
