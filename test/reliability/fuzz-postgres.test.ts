import { describe, expect, it } from 'vitest';
import { testDatabase } from '../helpers/pg-db.js';
import { runFuzz } from './fuzz.js';

describe('fuzz from /openapi.json on the PostgreSQL store (fast-check, seeded)', () => {
  it('400 valid and broken requests: no 5xx, no response outside the document, no state ' +
    'or money change from a rejected request', async () => {
    const f = await runFuzz({ requests: 400, seed: 20261121, database: await testDatabase() });
    const figures = {
      requests: f.requests,
      serverErrors: f.serverErrors,
      schemaBreaks: f.schemaBreaks,
      rejectedWrites: f.rejectedWrites,
      balanceChanges: f.balanceChanges,
      replayMismatches: f.replayMismatches,
    };
    expect(figures, f.samples.join('\n')).toEqual({
      requests: 400,
      serverErrors: 0,
      schemaBreaks: 0,
      rejectedWrites: 0,
      balanceChanges: 0,
      replayMismatches: 0,
    });
    // Not vacuous: requests were refused, others succeeded and wrote, retries were replayed.
    expect(f.byStatus['400']).toBeGreaterThan(40);
    expect(f.operationsWith2xx.length).toBeGreaterThan(f.operations / 3);
    expect(f.replays).toBeGreaterThan(0);
    expect(f.money?.holds, JSON.stringify(f.money)).toBe(true);
  }, 120_000);
});
