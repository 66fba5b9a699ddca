import { IncomingMessage, type ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import express from 'express';
import pino from 'pino';
import supertest from 'supertest';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/api/app.js';
import { compileTrust } from '../../src/api/edge/call.js';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { configFrom } from '../../src/config/load.js';
import { createKey } from '../../src/domain/users/keys.js';
import { createUser } from '../../src/domain/users/users.js';
import { createHttpServer } from '../../src/http-server.js';
import { MemoryStore } from '../../src/store/core/memory-store.js';
import { observeCommits } from '../../src/store/core/commit-signal.js';
import type { EdgeCall } from '../../src/util/http.js';

/** An app with rate limits on and a mounted probe that answers what its request is made of. */
async function appWithProbe() {
  const { store, commits } = observeCommits(new MemoryStore());
  const config = configFrom({
    rate_limits: { enabled: true, general: { limit: 100, window: '1m' }, anonymous: { limit: 3, window: '1m' } },
  });
  const env = { clock: new VirtualClock(Date.parse('2026-11-21T12:00:00Z')), config };
  const key = await store.transaction((tx) => createKey(tx, env, createUser(tx, env, { name: 'Alice' }).id).api_key);
  const api = createApp({ store, commits, env, log: pino({ level: 'silent' }) });
  api.mount('/probe', (req: IncomingMessage, res: ServerResponse, call: EdgeCall) => {
    res.setHeader('Content-Type', 'application/json');
    res.end(
      JSON.stringify({
        node: Object.getPrototypeOf(req) === IncomingMessage.prototype,
        own: Object.keys(req).filter((k) => !NODE_OWN.has(k)),
        id: call.id,
        ip: (call as EdgeCall & { ip?: string }).ip,
      }),
    );
  });
  return { api, key, config };
}

/** What node itself puts on a request (anything else was added on its way). */
const NODE_OWN = new Set(Object.keys(new IncomingMessage(new Socket())));

describe(
  'the HTTP edge (api/edge/): one call object per request, node’s request and response ' + 'left as node made them',
  () => {
    it('hands a mounted service node’s own request, and the call with its id and address', async () => {
      const { api, config } = await appWithProbe();
      const served = supertest(createHttpServer(api.listener, config.server));
      const res = await served.get('/probe').expect(200);
      expect(res.body).toEqual({
        node: true,
        own: [],
        id: res.headers['x-request-id'],
        ip: expect.stringMatching(/127\.0\.0\.1$/),
      });
    });

    it('reads the client address as express’s "trust proxy" does, for every kind of server.trust_proxy value', () => {
      const values = [false, true, 0, 1, 2, 'loopback', '10.0.0.0/8, 127.0.0.1', 'uniquelocal'];
      const addresses = ['127.0.0.1', '10.1.2.3', '203.0.113.9', '::1', 'fd00::1'];
      for (const value of values) {
        const ours = compileTrust(value);
        const app = express().set('trust proxy', value);
        const theirs = app.get('trust proxy fn') as (a: string, i: number) => boolean;
        for (const a of addresses)
          for (const hop of [0, 1, 2]) expect([value, a, hop, ours(a, hop)]).toEqual([value, a, hop, theirs(a, hop)]);
      }
    });

    it(
      'are counted and answered as before: RateLimit fields, the anonymous limit per ' + 'address, 401 and 404 bodies',
      async () => {
        const { api, key, config } = await appWithProbe();
        const served = supertest(createHttpServer(api.listener, config.server));
        const me = await served.get('/api/v1/me').set('X-API-Key', key).expect(200);
        expect(me.headers['ratelimit-policy']).toMatch(/^"general"; q=100; w=60; pk=/);
        expect(me.headers.ratelimit).toMatch(/^"general"; r=99; t=\d+/);
        expect(me.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
        const unknown = await served.get('/api/v1/nope').set('X-API-Key', key).expect(404);
        expect(unknown.body.error.code).toBe('not_found');
        const statuses: number[] = [];
        for (let i = 0; i < 5; i++)
          statuses.push((await served.get('/api/v1/me').set('X-API-Key', 'pinbot_wrong')).status);
        expect(statuses).toEqual([401, 401, 401, 429, 429]);
      },
    );

    it('reads a plain JSON body as body-parser does: the same answer for every body, whichever reads it', async () => {
      const { api, key, config } = await appWithProbe();
      const served = supertest(createHttpServer(api.listener, config.server));
      const bodies = [
        '',
        ' ',
        '\ufeff{"recipient_pin":"X"}',
        '"text"',
        ' \t\r\n {"recipient_pin":"X"}',
        ' \n',
        '{"a":',
        '[1]',
        '{"recipient_pin":"AAAA-BBBB","content":"hé"}',
        'x'.repeat(102_401),
      ];
      for (const body of bodies) {
        const answers = [];
        // application/json in UTF-8: read by the edge; text/plain: by body-parser (the type is not looked at)
        for (const type of ['application/json', 'text/plain']) {
          const res = await served
            .post('/api/v1/messages/send')
            .set('X-API-Key', key)
            .set('Content-Type', type)
            .send(body);
          answers.push([res.status, res.body.error?.code]);
        }
        expect([body.slice(0, 20), answers[0]]).toEqual([body.slice(0, 20), answers[1]]);
      }
    });
  },
);
