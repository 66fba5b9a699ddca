import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { createScheduler } from '../../src/clock/scheduler.js';
import { CounterFamily, HistogramFamily, MAX_CELLS } from '../../src/telemetry/families.js';
import { metrics, metricsText } from '../../src/telemetry/metrics.js';
import { testApi } from '../helpers/api.js';

const T0 = Date.parse('2026-11-21T12:00:00Z');

describe('metric families', () => {
  it('a histogram prints cumulative buckets, +Inf, sum and count', () => {
    const h = new HistogramFamily('x_seconds', 'help', ['bot'], [0.1, 1]);
    h.observe(['a'], 0.05);
    h.observe(['a'], 0.5);
    h.observe(['a'], 7);
    expect(h.get().values.map((v) => [v.metricName, v.labels.le ?? '', v.value])).toEqual([
      ['x_seconds_bucket', 0.1, 1],
      ['x_seconds_bucket', 1, 2],
      ['x_seconds_bucket', '+Inf', 3],
      ['x_seconds_sum', '', 7.55],
      ['x_seconds_count', '', 3],
    ]);
  });

  it('keeps at most MAX_CELLS label sets: the rest are counted under _overflow', () => {
    const c = new CounterFamily('y_total', 'help', ['bot', 'rule']);
    for (let i = 0; i < MAX_CELLS + 50; i++) c.inc([`bot${i}`, 'r']);
    const values = c.get().values;
    expect(values).toHaveLength(MAX_CELLS + 1);
    expect(values.find((v) => v.labels.bot === '_overflow')).toEqual({
      labels: { bot: '_overflow', rule: '_overflow' },
      value: 50,
    });
  });

  it('a label value is escaped in the exposition (a quote or newline in a bot name cannot forge a line)', async () => {
    metrics.botRuns.inc(['evil"}\nfake_metric 1', 'r', 'done']);
    const text = (await metricsText()).text;
    expect(text).toContain('pinbot_bot_runs_total{bot="evil\\"}\\nfake_metric 1",rule="r",outcome="done"} 1');
    expect(text).not.toMatch(/^fake_metric/m);
  });
});

describe('counters that move', () => {
  it('a 429 counts in pinbot_rate_limited_total{bucket}', async () => {
    const api = await testApi({ config: { rate_limits: { enabled: true, general: { limit: 2, window: '1h' } } } });
    try {
      const { headers } = await api.user('Ann');
      const before = metrics.rateLimited.sum({ bucket: 'general' });
      for (let i = 0; i < 4; i++) await api.http.get('/api/v1/me').set(headers);
      expect(metrics.rateLimited.sum({ bucket: 'general' }) - before).toBe(2);
    } finally {
      await api.close();
    }
  });

  it('scheduled jobs count as run (ok, failed) and, when a run overlaps its next due times, missed', async () => {
    const clock = new VirtualClock(T0);
    const scheduler = createScheduler(clock);
    let n = 0;
    scheduler.add(
      'every-minute',
      '* * * * *',
      async () => {
        n++;
        if (n === 2) throw new Error('the second run fails');
        // the third run takes three minutes: the two due times it overlaps are missed
        if (n === 3) await clock.sleep(150_000, undefined, { parked: true });
      },
      { onError: () => undefined },
    );
    const count = (outcome: string) => metrics.jobsRun.sum({ job: 'every-minute', outcome });
    await clock.advance(3 * 60_000); // 12:01 ok, 12:02 failed, 12:03 still going
    expect([count('ok'), count('failed')]).toEqual([1, 1]);
    await clock.advance(3 * 60_000); // the 12:03 run ends at 12:05:30: 12:04 and 12:05 missed; 12:06 runs
    expect([count('ok'), count('failed')]).toEqual([3, 1]);
    expect(metrics.jobsMissed.sum({ job: 'every-minute' })).toBe(2);
    scheduler.stop();
  });
});
