import { describe, expect, it } from 'vitest';
import { runFuzz } from './fuzz.js';

describe('fuzz from /openapi.json (fast-check, seeded)', () => {
  it('2,000 valid and broken requests: no 5xx, no response outside the document, no ' +
    'state or money change from a rejected request', async () => {
    const f = await runFuzz({ requests: 2000, seed: 20261121 });
    const figures = {
      requests: f.requests,
      serverErrors: f.serverErrors,
      schemaBreaks: f.schemaBreaks,
      rejectedWrites: f.rejectedWrites,
      balanceChanges: f.balanceChanges,
      replayMismatches: f.replayMismatches,
    };
    expect(figures, f.samples.join('\n')).toEqual({
      requests: 2000,
      serverErrors: 0,
      schemaBreaks: 0,
      rejectedWrites: 0,
      balanceChanges: 0,
      replayMismatches: 0,
    });
    // Not vacuous: most requests were refused, many succeeded, retries were replayed.
    expect(f.byStatus['400']).toBeGreaterThan(200);
    expect(f.operationsWith2xx.length).toBeGreaterThanOrEqual(Math.ceil(f.operations / 2));
    expect(f.replays).toBeGreaterThan(0);
    if (f.money) expect(f.money.holds, JSON.stringify(f.money)).toBe(true);
  }, 180_000);
});
