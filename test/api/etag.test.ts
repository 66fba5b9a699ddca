import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/client.js';
import { sendDirect } from '../../src/domain/messaging/send.js';
import { testApi, type TestApi } from '../helpers/api.js';

/** Conditional reads of the lists bots poll (an extension, docs/api.md "Conditional reads"). */

let api: TestApi | undefined;
let other: Server | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
  await new Promise<void>((r) => (other ? other.close(() => r()) : r()));
  other = undefined;
});

describe('ETag and If-None-Match', () => {
  it(
    'a list answers an ETag; the same ETag in If-None-Match is a 304 without a body, ' +
      'counted against conditional instead of general',
    async () => {
      api = await testApi({ config: { rate_limits: { enabled: true, general: { limit: 50, window: '1h' } } } });
      const alice = await api.user('Alice');
      const bob = await api.user('Bob');
      const first = await api.http.get('/api/v1/conversations').set(alice.headers).expect(200);
      const tag = first.headers.etag as string;
      expect(tag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      expect(first.headers.ratelimit).toMatch(/"general"; r=49;/);
      for (let i = 0; i < 3; i++) {
        const again = await api.http
          .get('/api/v1/conversations')
          .set({ ...alice.headers, 'If-None-Match': tag })
          .expect(304);
        expect(again.text).toBe('');
        expect(again.headers.etag).toBe(tag);
        expect(again.headers.ratelimit).toMatch(/"general"; r=49;/); // given back
      }
      expect(
        (await api.http.get('/api/v1/conversations').set({ ...alice.headers, 'If-None-Match': `W/"x", ${tag}` }))
          .status,
      ).toBe(304);
      // a change: a new body, a new tag
      await api.store.transaction((tx) =>
        sendDirect(tx, api!.env, bob.user, { recipient_pin: alice.user.pin_code, content: 'hi' }),
      );
      const changed = await api.http
        .get('/api/v1/conversations')
        .set({ ...alice.headers, 'If-None-Match': tag })
        .expect(200);
      expect(changed.headers.etag).not.toBe(tag);
      expect(changed.body.conversations).toHaveLength(1);
      expect(changed.headers.ratelimit).toMatch(/"general"; r=48;/);
    },
  );

  it('every list a bot polls answers ETags, and /openapi.json declares If-None-Match and 304 on them', async () => {
    api = await testApi();
    const alice = await api.user('Alice');
    const lists = [
      '/conversations',
      '/wallet/transactions',
      '/wallet/pending',
      '/wallet/balance',
      '/introductions',
      '/introductions/pending',
      '/contacts',
      '/contacts/requests/pending',
    ];
    for (const path of lists) {
      const res = await api.http.get(`/api/v1${path}`).set(alice.headers).expect(200);
      expect(res.headers.etag, path).toBeDefined();
      const doc = (await api.http.get('/openapi.json')).body.paths[`/api/v1${path}`].get;
      expect(
        doc.parameters.map((p: { name: string }) => p.name),
        path,
      ).toContain('If-None-Match');
      expect(doc.responses['304'], path).toBeDefined();
      expect(doc.responses['200'].headers.ETag, path).toBeDefined();
    }
    expect((await api.http.get('/api/v1/me').set(alice.headers)).headers.etag).toBeUndefined();
  });

  it(
    'the client reads conditionally where the server gives ETags, and works unchanged ' + 'against one that does not',
    async () => {
      api = await testApi();
      const alice = await api.user('Alice');
      const statuses: number[] = [];
      const server = api.app.listen(0);
      server.on('request', (_req, res) => res.on('finish', () => statuses.push(res.statusCode)));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const client = createClient({ baseUrl: url, apiKey: alice.key });
        for (let i = 0; i < 3; i++) expect(await client.contacts.list()).toEqual({ contacts: [] });
        expect(statuses).toEqual([200, 304, 304]);
      } finally {
        await new Promise((r) => server.close(r));
      }
      // a server without ETags (that would not honour If-None-Match either)
      const seen: Array<string | undefined> = [];
      other = createServer((req, res) => {
        seen.push(req.headers['if-none-match']);
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"contacts":[]}');
      });
      await new Promise<void>((r) => other!.listen(0, '127.0.0.1', r));
      const plain = createClient({ baseUrl: `http://127.0.0.1:${(other.address() as AddressInfo).port}`, apiKey: 'k' });
      for (let i = 0; i < 2; i++) expect(await plain.contacts.list()).toEqual({ contacts: [] });
      expect(seen).toEqual([undefined, undefined]);
    },
  );
});
