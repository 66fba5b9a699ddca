import type { IncomingMessage, ServerResponse } from 'node:http';
import pino from 'pino';
import supertest from 'supertest';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/api/app.js';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { configFrom } from '../../src/config/load.js';
import { createKey } from '../../src/domain/users/keys.js';
import { createUser } from '../../src/domain/users/users.js';
import { createHttpServer } from '../../src/http-server.js';
import { MemoryStore } from '../../src/store/core/memory-store.js';
import { observeCommits } from '../../src/store/core/commit-signal.js';

/** An app with rate limits on and a mounted probe that answers what its request is made of. */
async function appWithProbe() {
  const { store, commits } = observeCommits(new MemoryStore());
  const config = configFrom({
    rate_limits: { enabled: true, general: { limit: 100, window: '1m' }, anonymous: { limit: 3, window: '1m' } },
  });
  const env = { clock: new VirtualClock(Date.parse('2026-11-21T12:00:00Z')), config };
  const key = await store.transaction((tx) => createKey(tx, env, createUser(tx, env, { name: 'Alice' }).id).api_key);
  const api = createApp({ store, commits, env, log: pino({ level: 'silent' }) });
  api.mount('/probe', (req: IncomingMessage, res: ServerResponse) => {
    const r = req as IncomingMessage & { ip?: string; get?: unknown };
    res.setHeader('Content-Type', 'application/json');
    res.end(
      JSON.stringify({
        born: Object.getPrototypeOf(req) === api.classes.IncomingMessage.prototype,
        ip: r.ip,
        get: typeof r.get,
      }),
    );
  });
  return { api, key, config };
}

describe('requests born with the app’s methods (api/request-classes.ts)', () => {
  it('keep their prototype through the app, and have express’s methods all the same', async () => {
    const { api, config } = await appWithProbe();
    const served = supertest(createHttpServer(api.listener, config.server, api.classes));
    const res = await served.get('/probe').expect(200);
    expect(res.body).toEqual({ born: true, ip: expect.stringMatching(/127\.0\.0\.1$/), get: 'function' });
  });

  it('made any other way, go through the app as express makes them (same answers)', async () => {
    const { api } = await appWithProbe();
    const res = await supertest(api.app).get('/probe').expect(200);
    expect(res.body).toEqual({ born: false, ip: expect.stringMatching(/127\.0\.0\.1$/), get: 'function' });
  });

  it('are counted and answered as before: RateLimit fields, the anonymous limit per address, 401 and 404 bodies', async () => {
    const { api, key, config } = await appWithProbe();
    const served = supertest(createHttpServer(api.listener, config.server, api.classes));
    const me = await served.get('/api/v1/me').set('X-API-Key', key).expect(200);
    expect(me.headers['ratelimit-policy']).toMatch(/^"general"; q=100; w=60; pk=/);
    expect(me.headers.ratelimit).toMatch(/^"general"; r=99; t=\d+/);
    expect(me.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const unknown = await served.get('/api/v1/nope').set('X-API-Key', key).expect(404);
    expect(unknown.body.error.code).toBe('not_found');
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await served.get('/api/v1/me').set('X-API-Key', 'pinbot_wrong')).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
  });
});
