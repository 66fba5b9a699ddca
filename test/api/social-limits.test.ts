import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contactRoutes } from '../../src/api/contacts/routes.js';
import { introductionRoutes } from '../../src/api/introductions/routes.js';
import { messagingRoutes } from '../../src/api/messaging/routes.js';
import { createKey } from '../../src/domain/users/keys.js';
import { testApi, type TestApi } from '../helpers/api.js';
import { caller, socialState, type CallOptions } from '../helpers/social.js';

type Who = Awaited<ReturnType<TestApi['user']>>;

describe('rate-limit buckets (API.md "Rate limits")', () => {
  let api: TestApi;
  let call: ReturnType<typeof caller>;
  beforeAll(async () => {
    // One-hour windows: the test never straddles a window boundary, whatever the wall clock does.
    api = await testApi({
      memory: true,
      config: {
        rate_limits: {
          enabled: true,
          general: { limit: 1000, window: '1h' },
          messages: { limit: 3, window: '1h' },
          contacts: { limit: 2, window: '1h' },
          intros: { limit: 1, window: '1h' },
        },
      },
    });
    call = caller(api);
  });
  afterAll(() => api.close());

  const expect429 = async (res: Awaited<ReturnType<typeof call>>, bucket: string) => {
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('rate_limited');
    expect(res.body.error.retry_after).toBeGreaterThan(0);
    expect(Number(res.headers['retry-after'])).toBe(res.body.error.retry_after);
    expect(res.headers['ratelimit-policy']).toContain(`"${bucket}"`);
  };

  it(
    'messages: POST /messages/send and POST /conversations/:id/messages share 30/min ' +
      '(here 3), per user across keys',
    async () => {
      const alice = await api.user('Alice');
      const bob = await api.user('Bob');
      const secondKey = await api.store.transaction((tx) => createKey(tx, api.env, alice.user.id).api_key);
      const first = await call(alice, 'post', '/messages/send', {
        body: { recipient_pin: bob.user.pin_code, content: '1' },
      });
      expect(first.status).toBe(201);
      expect(first.headers['ratelimit-policy']).toContain('"messages"');
      const id = first.body.conversation_id;
      expect(
        (await call(alice, 'post', '/conversations/:id/messages', { params: { id }, body: { content: '2' } })).status,
      ).toBe(201);
      expect(
        (
          await call({ headers: { 'X-API-Key': secondKey } }, 'post', '/messages/send', {
            body: { recipient_pin: bob.user.pin_code, content: '3' },
          })
        ).status,
      ).toBe(201);
      const before = socialState(api.store);
      await expect429(
        await call(alice, 'post', '/conversations/:id/messages', { params: { id }, body: { content: '4' } }),
        'messages',
      );
      await expect429(
        await call({ headers: { Authorization: `Bearer ${secondKey}` } }, 'post', '/messages/send', {
          body: { recipient_pin: bob.user.pin_code, content: '4' },
        }),
        'messages',
      );
      expect(socialState(api.store)).toBe(before);
      // Reading and opening conversations are not in the messages bucket; Bob has his own budget.
      const page = await call(alice, 'get', '/conversations/:id/messages', { params: { id } });
      expect(page.status).toBe(200);
      expect(page.headers['ratelimit-policy']).not.toContain('"messages"');
      expect(
        (await call(alice, 'post', '/conversations', { body: { participant_pin: bob.user.pin_code } })).status,
      ).toBe(200);
      expect(
        (await call(bob, 'post', '/conversations/:id/messages', { params: { id }, body: { content: 'mine' } })).status,
      ).toBe(201);
    },
  );

  it('contacts: POST /contacts/request is 20/hour (here 2)', async () => {
    const a = await api.user('A');
    const [b, c, d] = [await api.user('B'), await api.user('C'), await api.user('D')];
    expect((await call(a, 'post', '/contacts/request', { body: { pin_code: b.user.pin_code } })).status).toBe(201);
    expect((await call(a, 'post', '/contacts/request', { body: { pin_code: c.user.pin_code } })).status).toBe(201);
    const before = socialState(api.store);
    await expect429(await call(a, 'post', '/contacts/request', { body: { pin_code: d.user.pin_code } }), 'contacts');
    expect(socialState(api.store)).toBe(before);
    expect((await call(a, 'get', '/contacts/requests/pending')).status).toBe(200);
  });

  it('intros: POST /introductions is 10/hour (here 1)', async () => {
    const a = await api.user('A');
    const [b, c] = [await api.user('B'), await api.user('C')];
    const body = { participant_pins: [b.user.pin_code, c.user.pin_code] };
    expect((await call(a, 'post', '/introductions', { body })).status).toBe(201);
    const before = socialState(api.store);
    await expect429(await call(a, 'post', '/introductions', { body }), 'intros');
    expect(socialState(api.store)).toBe(before);
    const intro = (await call(a, 'get', '/introductions')).body.introductions[0];
    // answering is not in the bucket
    expect((await call(b, 'post', '/introductions/:id/accept', { params: { id: intro.id } })).status).toBe(200);
  });

  it('the buckets sit on exactly the routes API.md names', () => {
    const buckets = Object.fromEntries(
      [...messagingRoutes, ...introductionRoutes, ...contactRoutes]
        .filter((r) => r.buckets?.length)
        .map((r) => [`${r.method} ${r.path}`, r.buckets]),
    );
    expect(buckets).toEqual({
      'post /messages/send': ['messages'],
      'post /conversations': ['groups'],
      'post /conversations/:id/messages': ['messages'],
      'post /contacts/request': ['contacts'],
      'post /introductions': ['intros'],
    });
  });
});

describe('Idempotency-Key on every POST of these areas', () => {
  let api: TestApi;
  let call: ReturnType<typeof caller>;
  beforeAll(async () => {
    api = await testApi();
    call = caller(api);
  });
  afterAll(() => api.close());

  interface Case {
    as: Who;
    opts: CallOptions;
    /** The same key with a different request. */
    other: CallOptions;
  }
  let n = 0;
  const three = async () => [await api.user(`P${++n}`), await api.user(`Q${n}`), await api.user(`R${n}`)] as const;
  const intro = async () => {
    const [a, b, c] = await three();
    const id = (
      await call(a, 'post', '/introductions', { body: { participant_pins: [b.user.pin_code, c.user.pin_code] } })
    ).body.id;
    const id2 = (
      await call(a, 'post', '/introductions', { body: { participant_pins: [b.user.pin_code, c.user.pin_code] } })
    ).body.id;
    return { b, id, id2 };
  };
  const request = async () => {
    const [a, b, c] = await three();
    const id = (await call(a, 'post', '/contacts/request', { body: { pin_code: b.user.pin_code } })).body.id;
    const id2 = (await call(c, 'post', '/contacts/request', { body: { pin_code: b.user.pin_code } })).body.id;
    return { b, id, id2 };
  };
  const cases: Record<string, () => Promise<Case>> = {
    'post /messages/send': async () => {
      const [a, b] = await three();
      return {
        as: a,
        opts: { body: { recipient_pin: b.user.pin_code, content: 'once' } },
        other: { body: { recipient_pin: b.user.pin_code, content: 'twice' } },
      };
    },
    'post /conversations': async () => {
      const [a, b, c] = await three();
      return {
        as: a,
        opts: { body: { participant_pins: [b.user.pin_code, c.user.pin_code], name: 'g' } },
        other: { body: { participant_pin: b.user.pin_code } },
      };
    },
    'post /conversations/:id/messages': async () => {
      const [a, b] = await three();
      const id = (await call(a, 'post', '/conversations', { body: { participant_pin: b.user.pin_code } })).body.id;
      return {
        as: b,
        opts: { params: { id }, body: { content: 'once' } },
        other: { params: { id }, body: { content: 'other' } },
      };
    },
    'post /conversations/:id/leave': async () => {
      const [a, b, c] = await three();
      const group = { body: { participant_pins: [b.user.pin_code, c.user.pin_code], name: 'g' } };
      const id = (await call(a, 'post', '/conversations', group)).body.id;
      const id2 = (await call(a, 'post', '/conversations', group)).body.id;
      return { as: b, opts: { params: { id } }, other: { params: { id: id2 } } };
    },
    'post /introductions': async () => {
      const [a, b, c] = await three();
      return {
        as: a,
        opts: { body: { participant_pins: [b.user.pin_code, c.user.pin_code] } },
        other: { body: { participant_pins: [c.user.pin_code, b.user.pin_code] } },
      };
    },
    'post /introductions/:id/accept': async () => {
      const { b, id, id2 } = await intro();
      return { as: b, opts: { params: { id } }, other: { params: { id: id2 } } };
    },
    'post /introductions/:id/decline': async () => {
      const { b, id, id2 } = await intro();
      return { as: b, opts: { params: { id } }, other: { params: { id: id2 } } };
    },
    'post /contacts/request': async () => {
      const [a, b, c] = await three();
      return { as: a, opts: { body: { pin_code: b.user.pin_code } }, other: { body: { pin_code: c.user.pin_code } } };
    },
    'post /contacts/requests/:id/accept': async () => {
      const { b, id, id2 } = await request();
      return { as: b, opts: { params: { id } }, other: { params: { id: id2 } } };
    },
    'post /contacts/requests/:id/decline': async () => {
      const { b, id, id2 } = await request();
      return { as: b, opts: { params: { id } }, other: { params: { id: id2 } } };
    },
  };

  it('has a case for every POST route', () => {
    const posts = [...messagingRoutes, ...introductionRoutes, ...contactRoutes]
      .filter((r) => r.method === 'post')
      .map((r) => `${r.method} ${r.path}`);
    expect(new Set(Object.keys(cases))).toEqual(new Set(posts));
  });

  it.each(Object.keys(cases))(
    '%s: a retry replays the first answer byte for byte and changes nothing; another request with the key is 409',
    async (name) => {
      const path = name.slice(name.indexOf(' ') + 1);
      const c = await cases[name]!();
      const key = { 'Idempotency-Key': `key-${name}` };
      const first = await call(c.as, 'post', path, { ...c.opts, headers: key });
      expect(first.status).toBeLessThan(300);
      const after = socialState(api.store);
      const retry = await call(c.as, 'post', path, { ...c.opts, headers: key });
      expect(retry.status).toBe(first.status);
      expect(retry.text).toBe(first.text);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(socialState(api.store)).toBe(after);
      const reused = await call(c.as, 'post', path, { ...c.other, headers: key });
      expect(reused.status).toBe(409);
      expect(reused.body.error.code).toBe('idempotency_key_reused');
      expect(socialState(api.store)).toBe(after);
      // Without the key the same request is a new operation (here: refused or repeated, never replayed).
      const fresh = await call(c.as, 'post', path, c.opts);
      expect(fresh.headers['idempotent-replayed']).toBeUndefined();
    },
  );

  it('a business refusal is stored and replayed too (403 for the introducer)', async () => {
    const [a, b, c] = await three();
    const id = (
      await call(a, 'post', '/introductions', { body: { participant_pins: [b.user.pin_code, c.user.pin_code] } })
    ).body.id;
    const headers = { 'Idempotency-Key': 'refusal' };
    const first = await call(a, 'post', '/introductions/:id/accept', { params: { id }, headers });
    expect(first.status).toBe(403);
    const again = await call(a, 'post', '/introductions/:id/accept', { params: { id }, headers });
    expect([again.status, again.text, again.headers['idempotent-replayed']]).toEqual([403, first.text, 'true']);
  });
});
