import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/client.js';
import { Conversations } from '../../src/domain/messaging/collections.js';
import { createGroup } from '../../src/domain/messaging/conversations.js';
import { postMessage } from '../../src/domain/messaging/messages.js';
import { testApi, type TestApi } from '../helpers/api.js';

type U = Awaited<ReturnType<TestApi['user']>>;

/** Makes `n` groups of `owner` and `other` straight in the store, each with activity 1 ms apart. */
async function groups(api: TestApi, owner: U, other: U, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    api.clock.set(api.clock.now() + 1);
    ids.push(await api.store.transaction((tx) => createGroup(tx, api.env, [owner.user.id, other.user.id], `g${i}`).id));
  }
  return ids;
}

describe('GET /conversations is paged (extension): limit, before, has_more, next_before', () => {
  let api: TestApi;
  let alice: U;
  let bob: U;
  let made: string[];
  beforeAll(async () => {
    api = await testApi({ memory: true });
    alice = await api.user('Alice');
    bob = await api.user('Bob');
    made = await groups(api, alice, bob, 60);
  });
  afterAll(() => api.close());

  it('answers 50 by default, newest activity first, with has_more and the cursor of the next page', async () => {
    const res = await api.http.get('/api/v1/conversations').set(alice.headers).expect(200);
    expect(res.body.conversations).toHaveLength(50);
    expect(res.body.conversations.map((c: { id: string }) => c.id)).toEqual([...made].reverse().slice(0, 50));
    expect(res.body.has_more).toBe(true);
    expect(res.body.next_before).toMatch(/^\d+\.cnv_/);
  });

  it('pages through everything once, in order, also when a conversation moves to the top meanwhile', async () => {
    const seen: string[] = [];
    let before: string | undefined;
    for (let page = 0; ; page++) {
      const res = await api.http
        .get('/api/v1/conversations')
        .query({ limit: 7, ...(before ? { before } : {}) })
        .set(alice.headers)
        .expect(200);
      seen.push(...res.body.conversations.map((c: { id: string }) => c.id));
      if (page === 1) {
        // An older conversation gets a message: it moves to the top, already read; the pages
        // after the cursor neither repeat nor skip anything else.
        api.clock.set(api.clock.now() + 1);
        await api.store.transaction((tx) =>
          postMessage(tx, api.env, tx.col(Conversations).get(made[3]!)!, bob.user.id, 'bump'),
        );
      }
      if (!res.body.has_more) {
        expect(res.body.next_before).toBeNull();
        break;
      }
      before = res.body.next_before;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((id) => id !== made[3])).toEqual([...made].reverse().filter((id) => id !== made[3]));
  });

  it('refuses a limit out of range or a malformed cursor (400), never clamps', async () => {
    for (const q of ['limit=0', 'limit=201', 'before=cnv_1', 'before=12.txn_abc', `before=${'1'.repeat(17)}.cnv_a`]) {
      const res = await api.http.get(`/api/v1/conversations?${q}`).set(alice.headers).expect(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details[0].path).toBe(`query.${q.split('=')[0]}`);
    }
  });

  it('the client reads every page (a bot sees all its conversations)', async () => {
    const server = createServer(api.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const client = createClient({
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        apiKey: alice.key,
      });
      const all = await client.conversations.list();
      expect(all.conversations).toHaveLength(60);
      const stopped = await client.conversations.list({ stopAfter: (c) => c.name === 'g55' });
      expect(stopped.conversations.map((c) => c.name)).toEqual(['g3', 'g59', 'g58', 'g57', 'g56', 'g55']);
    } finally {
      server.close();
    }
  });
});

describe('POST /conversations/:id/leave (extension)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await testApi({ memory: true });
  });
  afterAll(() => api.close());

  it('takes the caller out of a group, which goes on without them', async () => {
    const [alice, bob, carol] = [await api.user('Alice'), await api.user('Bob'), await api.user('Carol')];
    const group = (
      await api.http
        .post('/api/v1/conversations')
        .set(alice.headers)
        .send({ participant_pins: [bob.user.pin_code, carol.user.pin_code], name: 'Spam' })
        .expect(201)
    ).body;
    const res = await api.http.post(`/api/v1/conversations/${group.id}/leave`).set(bob.headers).expect(200);
    expect(res.body).toEqual({ message: 'You left the group Spam.' });
    await api.http.get(`/api/v1/conversations/${group.id}`).set(bob.headers).expect(404);
    await api.http
      .post(`/api/v1/conversations/${group.id}/messages`)
      .set(bob.headers)
      .send({ content: 'hi' })
      .expect(404);
    expect((await api.http.get('/api/v1/conversations').set(bob.headers)).body.conversations).toEqual([]);
    const left = (await api.http.get(`/api/v1/conversations/${group.id}`).set(alice.headers).expect(200)).body;
    expect(left.participants.map((p: { display_name: string }) => p.display_name)).toEqual(['Alice', 'Carol']);
    await api.http
      .post(`/api/v1/conversations/${group.id}/messages`)
      .set(carol.headers)
      .send({ content: 'still here' })
      .expect(201);
    // A second leave: the group no longer exists for Bob.
    expect(
      (await api.http.post(`/api/v1/conversations/${group.id}/leave`).set(bob.headers).expect(404)).body.error.code,
    ).toBe('conversation_not_found');
  });

  it('a direct conversation cannot be left', async () => {
    const [dan, eve] = [await api.user('Dan'), await api.user('Eve')];
    const direct = (
      await api.http
        .post('/api/v1/conversations')
        .set(dan.headers)
        .send({ participant_pin: eve.user.pin_code })
        .expect(201)
    ).body;
    const res = await api.http.post(`/api/v1/conversations/${direct.id}/leave`).set(dan.headers).expect(400);
    expect(res.body.error.code).toBe('cannot_leave_direct');
  });
});

describe('creating groups has its own rate bucket (rate_limits.groups)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await testApi({
      memory: true,
      config: { rate_limits: { enabled: true, groups: { limit: 2, window: '1h' } } },
    });
  });
  afterAll(() => api.close());

  it('counts group creations only; past the limit 429 names the bucket and nothing is created', async () => {
    const [alice, bob, carol] = [await api.user('Alice'), await api.user('Bob'), await api.user('Carol')];
    const group = { participant_pins: [bob.user.pin_code, carol.user.pin_code], name: 'g' };
    for (let i = 1; i <= 2; i++) {
      const res = await api.http.post('/api/v1/conversations').set(alice.headers).send(group).expect(201);
      expect(res.headers['ratelimit-policy']).toMatch(/"groups"; q=2; w=3600/);
      expect(res.headers['ratelimit']).toMatch(new RegExp(`"groups"; r=${2 - i}`));
    }
    const refused = await api.http.post('/api/v1/conversations').set(alice.headers).send(group).expect(429);
    expect(refused.body.error.message).toMatch(/groups bucket \(2 per 1h\)/);
    expect(refused.headers['retry-after']).toBeDefined();
    // Opening a direct conversation does not count.
    const direct = await api.http
      .post('/api/v1/conversations')
      .set(alice.headers)
      .send({ participant_pin: bob.user.pin_code })
      .expect(201);
    expect(direct.headers['ratelimit-policy']).not.toMatch(/groups/);
    expect((await api.http.get('/api/v1/conversations').set(bob.headers)).body.conversations).toHaveLength(3);
  });
});
