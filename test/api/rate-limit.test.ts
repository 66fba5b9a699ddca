import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../src/domain/users/keys.js';
import { meRoutes } from '../../src/api/me/routes.js';
import { testApi, type TestApi } from '../helpers/api.js';
import { Notes, testRoutes } from '../helpers/test-routes.js';

// Windows of an hour: the counts below cannot be reset by the wall clock during the test.
const config = {
  rate_limits: { enabled: true, general: { limit: 5, window: '1h' }, messages: { limit: 2, window: '1h' } },
};

describe('rate limits', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await testApi({ config, routes: [...meRoutes, ...testRoutes] });
  });
  afterAll(() => api.close());

  it(
    'exactly the limit passes; the next request is 429 with Retry-After, RateLimit ' + 'fields and the error body',
    async () => {
      const alice = await api.user('Alice');
      for (let i = 1; i <= 5; i++) {
        const res = await api.http.get('/api/v1/me').set(alice.headers).expect(200);
        expect(res.headers['ratelimit-policy']).toMatch(/^"general"; q=5; w=3600; pk=:[A-Za-z0-9+/=]+:$/);
        expect(res.headers['ratelimit']).toMatch(new RegExp(`^"general"; r=${5 - i}; t=\\d+$`));
      }
      const res = await api.http.get('/api/v1/me').set(alice.headers).expect(429);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      const retryAfter = Number(res.headers['retry-after']);
      expect(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 3600).toBe(true);
      expect(res.headers['ratelimit']).toMatch(/^"general"; r=0; t=\d+$/);
      expect(res.headers['ratelimit-policy']).toMatch(/^"general"; q=5; w=3600/);
      expect(res.body).toEqual({
        error: {
          code: 'rate_limited',
          message: `Rate limit of the general bucket (5 per 1h) reached. Retry after ${retryAfter} s.`,
          retry_after: retryAfter,
        },
      });
    },
  );

  it('the seconds to reset (t=) and Retry-After are measured on the server’s clock, virtual or real', async () => {
    // the test API runs on a virtual clock at 2026-11-21T12:00Z, years away from the wall clock
    const carol = await api.user('Carol');
    const first = await api.http.get('/api/v1/me').set(carol.headers).expect(200);
    expect(first.headers['ratelimit']).toBe('"general"; r=4; t=3600');
    await api.clock.advance(30 * 60_000);
    const later = await api.http.get('/api/v1/me').set(carol.headers).expect(200);
    expect(later.headers['ratelimit']).toBe('"general"; r=3; t=1800');
    for (let i = 0; i < 3; i++) await api.http.get('/api/v1/me').set(carol.headers).expect(200);
    const refused = await api.http.get('/api/v1/me').set(carol.headers).expect(429);
    expect(refused.headers['ratelimit']).toBe('"general"; r=0; t=1800');
    expect(refused.headers['retry-after']).toBe('1800');
  });

  it('users are counted apart; all keys of one user share one budget', async () => {
    const bob = await api.user('Bob');
    const carol = await api.user('Carol');
    const bobKey2 = (await api.store.transaction((tx) => createKey(tx, api.env, bob.user.id))).api_key;
    for (let i = 0; i < 3; i++) await api.http.get('/api/v1/me').set(bob.headers).expect(200);
    for (let i = 0; i < 2; i++) await api.http.get('/api/v1/me').set('Authorization', `Bearer ${bobKey2}`).expect(200);
    await api.http.get('/api/v1/me').set('X-API-Key', bobKey2).expect(429);
    await api.http.get('/api/v1/me').set(bob.headers).expect(429);
    const c = await api.http.get('/api/v1/me').set(carol.headers).expect(200);
    expect(c.headers['ratelimit']).toMatch(/r=4;/);
  });

  it('a route with its own bucket reports both buckets; a request it rejects changes nothing', async () => {
    const dave = await api.user('Dave');
    for (let i = 1; i <= 2; i++) {
      const res = await api.http
        .post('/api/v1/test/messages')
        .set(dave.headers)
        .send({ text: `m${i}` })
        .expect(201);
      expect(res.headers['ratelimit-policy']).toMatch(
        /^"general"; q=5; w=3600; pk=:[^:]+:, "messages"; q=2; w=3600; pk=:[^:]+:$/,
      );
      expect(res.headers['ratelimit']).toMatch(
        new RegExp(`^"general"; r=${5 - i}; t=\\d+, "messages"; r=${2 - i}; t=\\d+$`),
      );
    }
    const res = await api.http.post('/api/v1/test/messages').set(dave.headers).send({ text: 'm3' }).expect(429);
    expect(res.body.error.code).toBe('rate_limited');
    expect(res.body.error.message).toMatch(/messages bucket \(2 per 1h\)/);
    expect(api.store.read.col(Notes).ids('user', dave.user.id)).toHaveLength(2);
    // The general budget still has room for other routes.
    await api.http.get('/api/v1/me').set(dave.headers).expect(200);
  });

  it('requests without a valid key are not counted against anyone', async () => {
    const erin = await api.user('Erin');
    for (let i = 0; i < 10; i++) await api.http.get('/api/v1/me').set('X-API-Key', 'pinbot_bad').expect(401);
    await api.http.get('/api/v1/me').set(erin.headers).expect(200);
  });
});

describe('a user’s own limit, and the policy text of each window', () => {
  it('each user’s policy names their own limit and key; a new window counts and says it afresh', async () => {
    // Frank has a limit of his own (rate_limits.users, by display name); Gina the bucket's
    const api = await testApi({
      config: { rate_limits: { enabled: true, general: { limit: 5, window: '1h' }, users: { Frank: { general: 2 } } } },
      routes: meRoutes,
    });
    try {
      const frank = await api.user('Frank');
      const gina = await api.user('Gina');
      const policy = (res: { headers: Record<string, string> }) => res.headers['ratelimit-policy']!;
      const f1 = await api.http.get('/api/v1/me').set(frank.headers).expect(200);
      const g1 = await api.http.get('/api/v1/me').set(gina.headers).expect(200);
      expect(policy(f1)).toMatch(/^"general"; q=2; w=3600; pk=:[A-Za-z0-9+/=]+:$/);
      expect(policy(g1)).toMatch(/^"general"; q=5; w=3600; pk=:[A-Za-z0-9+/=]+:$/);
      // the partition key is the user's, not the last one counted
      expect(policy(f1).split('pk=')[1]).not.toBe(policy(g1).split('pk=')[1]);
      const f2 = await api.http.get('/api/v1/me').set(frank.headers).expect(200);
      expect(policy(f2)).toBe(policy(f1));
      expect(f2.headers['ratelimit']).toBe('"general"; r=0; t=3600');
      const refused = await api.http.get('/api/v1/me').set(frank.headers).expect(429);
      expect(policy(refused)).toBe(policy(f1));
      expect(refused.headers['retry-after']).toBe('3600');
      const g2 = await api.http.get('/api/v1/me').set(gina.headers).expect(200);
      expect(policy(g2)).toBe(policy(g1));
      expect(g2.headers['ratelimit']).toBe('"general"; r=3; t=3600');
      // the window ends: a new one starts with the next request, with the same policy text
      await api.clock.advance(3600_000);
      const f3 = await api.http.get('/api/v1/me').set(frank.headers).expect(200);
      expect(f3.headers['ratelimit']).toBe('"general"; r=1; t=3600');
      expect(policy(f3)).toBe(policy(f1));
      await api.clock.advance(1_000);
      const f4 = await api.http.get('/api/v1/me').set(frank.headers).expect(200);
      expect(f4.headers['ratelimit']).toBe('"general"; r=0; t=3599');
    } finally {
      await api.close();
    }
  });
});

describe('rate limits switched off', () => {
  it('rate_limits.enabled: false lets everything through without RateLimit fields', async () => {
    const api = await testApi({ config: { rate_limits: { ...config.rate_limits, enabled: false } } });
    try {
      const alice = await api.user('Alice');
      for (let i = 0; i < 12; i++) {
        const res = await api.http.get('/api/v1/me').set(alice.headers).expect(200);
        expect(res.headers['ratelimit']).toBeUndefined();
      }
    } finally {
      await api.close();
    }
  });
});

describe('the anonymous bucket: requests without a valid key, per client address', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await testApi({
      config: { rate_limits: { enabled: true, anonymous: { limit: 3, window: '1h' } } },
      routes: meRoutes,
    });
  });
  afterAll(() => api.close());

  it('counts missing and bad keys and unknown routes outside /api/v1; then 429 with the catalogue body', async () => {
    const first = await api.http.get('/api/v1/me').expect(401);
    expect(first.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(first.headers['ratelimit-policy']).toMatch(/^"anonymous"; q=3; w=3600; pk=/);
    expect(first.headers['ratelimit']).toMatch(/^"anonymous"; r=2; t=\d+$/);
    await api.http.get('/api/v1/me').set('X-API-Key', 'pinbot_wrong').expect(401);
    await api.http.get('/no-such-page').expect(404);
    const res = await api.http.get('/api/v1/me').expect(429);
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(res.body).toEqual({
      error: {
        code: 'rate_limited',
        message:
          `Rate limit of requests without a valid API key from your address (3 per 1h) ` +
          `reached. Retry after ${retryAfter} s.`,
        retry_after: retryAfter,
      },
    });
    await api.http.get('/no-such-page').expect(429);
  });

  it('never limits a request with a valid key, nor /healthz and /openapi.json', async () => {
    const alice = await api.user('Alice');
    for (let i = 0; i < 5; i++) {
      const res = await api.http.get('/api/v1/me').set(alice.headers).expect(200);
      expect(res.headers['ratelimit-policy']).not.toMatch(/anonymous/);
      await api.http.get('/api/v1/nope').set(alice.headers).expect(404);
    }
    await api.http.get('/healthz').expect(200);
    await api.http.get('/openapi.json').expect(200);
  });
});
