import { describe, expect, it } from 'vitest';
import { requestId } from '../../src/api/edge/request-id.js';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('request ids (api/edge/request-id.ts)', () => {
  it('are version 4 UUIDs as crypto.randomUUID() writes them, never repeated across refills of the pool', () => {
    const ids = Array.from({ length: 2_000 }, () => requestId()); // the pool holds 256: several refills
    for (const id of ids) expect(id).toMatch(V4);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('are random in every position but the version and variant digits', () => {
    const ids = Array.from({ length: 1_000 }, () => requestId());
    for (let i = 0; i < 36; i++) {
      if ([8, 13, 18, 23].includes(i)) continue; // the dashes
      const seen = new Set(ids.map((id) => id[i]));
      if (i === 14) expect([...seen]).toEqual(['4']);
      else if (i === 19) expect([...seen].sort()).toEqual(['8', '9', 'a', 'b']);
      // 1,000 draws of 16 digits: every one shows (a digit is missed with chance ~1e-26)
      else expect(seen.size).toBe(16);
    }
  });
});
