import type { ClientRateLimitInfo, Store as RateLimitStore } from 'express-rate-limit';
import { pino } from 'pino';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/api/app.js';
import { configFrom } from '../../src/config/load.js';
import { createHttpServer } from '../../src/http-server.js';
import { testApi, type TestApi } from '../helpers/api.js';

// The key and the general limit are gates (api/edge/call.ts `Gate`): a call they pass at once
// goes on without a continuation; one they decide later (a shared store's promise, a key looked
// up again after catching up) goes on, or ends, once they have. Both ways give the same answers.

type Mode = 'at once' | 'later' | 'throws' | 'rejects';

/** A shared rate store of a budget of 2 a window, answering in the given way. */
function rateStore(mode: () => Mode): RateLimitStore {
  const hits = new Map<string, number>();
  const count = (key: string): ClientRateLimitInfo => {
    const n = (hits.get(key) ?? 0) + 1;
    hits.set(key, n);
    return { totalHits: n, resetTime: new Date(Date.parse('2026-11-21T13:00:00Z')) };
  };
  return {
    localKeys: false,
    increment(key: string) {
      const m = mode();
      if (m === 'throws') throw new Error('rate store down');
      if (m === 'rejects') return Promise.reject(new Error('rate store down'));
      return m === 'later' ? new Promise((r) => setTimeout(() => r(count(key)), 5)) : count(key);
    },
    decrement: (key: string) => void hits.set(key, Math.max(0, (hits.get(key) ?? 0) - 1)),
    resetKey: (key: string) => void hits.delete(key),
  } as unknown as RateLimitStore;
}

describe('the key and the general limit, decided at once or later', () => {
  let api: TestApi;
  let http: ReturnType<typeof supertest>;
  let mode: Mode = 'at once';
  const failures: unknown[] = [];
  beforeAll(async () => {
    api = await testApi();
    const config = configFrom({ rate_limits: { enabled: true, general: { limit: 2, window: '1h' } } });
    const log = pino({ level: 'error' }, { write: (line: string) => void failures.push(JSON.parse(line)) });
    // as on a shared database: the counts in a store of their own, an unknown key looked up again
    const { listener } = createApp({
      store: api.store,
      commits: api.commits,
      env: { clock: api.clock, config },
      log,
      shared: { rateStore: () => rateStore(() => mode) },
    });
    http = supertest(createHttpServer(listener, config.server));
  });
  afterAll(() => api.close());

  it.each(['at once', 'later'] as const)('a store answering %s: within the limit 200, past it 429', async (m) => {
    mode = m;
    const alice = await api.user(`Alice ${m}`);
    for (const left of [1, 0]) {
      const res = await http.get('/api/v1/me').set(alice.headers).expect(200);
      expect(res.body.id).toBe(alice.user.id);
      expect(res.headers.ratelimit).toMatch(new RegExp(`^"general"; r=${left}; t=\\d+$`));
    }
    const refused = await http.get('/api/v1/me').set(alice.headers).expect(429);
    expect(refused.body.error.code).toBe('rate_limited');
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
  });

  it.each(['throws', 'rejects'] as const)('a store that %s lets the call through and is logged', async (m) => {
    mode = m;
    failures.length = 0;
    const bob = await api.user(`Bob ${m}`);
    for (let i = 0; i < 3; i++) {
      const res = await http.get('/api/v1/me').set(bob.headers).expect(200);
      expect(res.body.id).toBe(bob.user.id);
      expect(res.headers.ratelimit).toBeUndefined();
    }
    expect(failures).toHaveLength(3);
    expect(failures[0]).toMatchObject({ bucket: 'general', msg: expect.stringMatching(/rate limit store failed/) });
  });

  it('an unknown key is looked up again after catching up, then refused with 401', async () => {
    mode = 'at once';
    const res = await http
      .get('/api/v1/me')
      .set('X-API-Key', `pinbot_${'B'.repeat(32)}`)
      .expect(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="pinbot"');
    expect(res.body.error.code).toBe('unauthorized');
  });

  it('an unknown route is still 404 after both gates, and counted', async () => {
    mode = 'later';
    const carol = await api.user('Carol');
    const res = await http.get('/api/v1/nothing-here').set(carol.headers).expect(404);
    expect(res.body.error.code).toBe('not_found');
    expect(res.headers.ratelimit).toMatch(/^"general"; r=1; t=\d+$/);
  });
});
