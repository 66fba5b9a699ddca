import { describe, expect, it } from 'vitest';
import { revealing500, runCanary } from './canary.js';

describe('secrets: a canary key never leaves the request', () => {
  it('is in no log line, no file of the data dir, no response — across 2xx, 4xx, 429 and 500', async () => {
    const c = await runCanary();
    // The paths the canary must have taken, or the search proves nothing.
    for (const status of ['200', '400', '401', '404', '413', '429', '500'])
      expect(c.byStatus[status] ?? 0, `status ${status}`).toBeGreaterThan(0);
    expect(c.byStatus['201'] ?? 0).toBeGreaterThan(0);
    expect(c.logLines).toBeGreaterThan(c.requests);
    expect(c.files).toBeGreaterThanOrEqual(2);
    expect(c.occurrences, c.where.join('\n')).toBe(0);
    expect(c.revealing500s, c.where.join('\n')).toBe(0);
  }, 120_000);

  it('counts a 500 that shows more than internal_error, not the bodiless 500 of a HEAD request', () => {
    const internal = '{"error":{"code":"internal_error","message":"Something went wrong on our side."}}';
    expect(revealing500({ status: 500, text: internal, json: JSON.parse(internal) })).toBe(false);
    expect(revealing500({ status: 500, text: '', json: undefined })).toBe(false);
    expect(
      revealing500({
        status: 500,
        text: '{"error":{"code":"internal_error","message":"boom"}}',
        json: { error: { code: 'internal_error' } },
      }),
    ).toBe(true);
    expect(revealing500({ status: 500, text: 'Error\n    at x (src/a.ts:3:1)', json: undefined })).toBe(true);
  });
});
