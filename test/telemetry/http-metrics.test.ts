import { describe, expect, it } from 'vitest';
import { markRoute, recordRequest, routeCells } from '../../src/telemetry/http-metrics.js';
import { metrics } from '../../src/telemetry/metrics.js';

describe('recordRequest (the HTTP families per route, method and status)', () => {
  it('counts each request in its own cells, whatever the request before it was', () => {
    const pattern = `/api/v1/test-${Math.random().toString(36).slice(2)}`;
    const cells = routeCells(pattern);
    const count = (method: string, status: number) => metrics.httpRequests.cell(pattern, method, String(status)).value;
    const observed = (method: string) => metrics.httpDuration.cell(pattern, method).count;
    // runs of the same kind (the last cells are reused) and changes of status, method and route between them
    const seq: Array<[string, number]> = [
      ['GET', 200],
      ['GET', 200],
      ['GET', 200],
      ['GET', 404],
      ['GET', 200],
      ['POST', 200],
      ['POST', 201],
      ['POST', 201],
      ['BREW', 200], // not a method of the table: 'other'
      ['BREW', 200],
      ['GET', 200],
    ];
    const other = routeCells(`${pattern}/other`);
    for (const [method, status] of seq) {
      const req = { method, url: pattern };
      markRoute(req, cells);
      recordRequest(req, status, 1);
      const elsewhere = { method: 'GET', url: `${pattern}/other` };
      markRoute(elsewhere, other);
      recordRequest(elsewhere, 500, 1);
    }
    expect(count('GET', 200)).toBe(5);
    expect(count('GET', 404)).toBe(1);
    expect(count('POST', 200)).toBe(1);
    expect(count('POST', 201)).toBe(2);
    expect(count('other', 200)).toBe(2);
    expect(observed('GET')).toBe(6);
    expect(observed('POST')).toBe(3);
    expect(observed('other')).toBe(2);
    expect(metrics.httpRequests.cell(`${pattern}/other`, 'GET', '500').value).toBe(seq.length);
  });
});
