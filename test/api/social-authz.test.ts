import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contactRoutes } from '../../src/api/contacts/routes.js';
import { introductionRoutes } from '../../src/api/introductions/routes.js';
import { messagingRoutes } from '../../src/api/messaging/routes.js';
import { testApi, type TestApi } from '../helpers/api.js';
import { caller, socialState } from '../helpers/social.js';

type Who = Awaited<ReturnType<TestApi['user']>>;

/**
 * Cross-user matrix (API.md "Who gets 403, who gets 404"): for every route that takes an :id,
 * a user who is not a party gets 404 exactly as for an id that does not exist, a party who may
 * not act gets 403, and neither changes the store.
 */
describe('cross-user matrix', () => {
  let api: TestApi;
  let call: ReturnType<typeof caller>;
  let alice: Who, bob: Who, carol: Who, eve: Who;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    api = await testApi({ memory: true });
    call = caller(api);
    [alice, bob, carol, eve] = [
      await api.user('Alice'),
      await api.user('Bob'),
      await api.user('Carol'),
      await api.user('Eve'),
    ];
    ids.direct = (
      await call(alice, 'post', '/messages/send', { body: { recipient_pin: bob.user.pin_code, content: 'private' } })
    ).body.conversation_id;
    ids.group = (
      await call(alice, 'post', '/conversations', {
        body: { participant_pins: [bob.user.pin_code, carol.user.pin_code], name: 'abc' },
      })
    ).body.id;
    ids.intro = (
      await call(alice, 'post', '/introductions', {
        body: { participant_pins: [bob.user.pin_code, carol.user.pin_code] },
      })
    ).body.id;
    ids.request = (await call(alice, 'post', '/contacts/request', { body: { pin_code: bob.user.pin_code } })).body.id;
    const r = (await call(carol, 'post', '/contacts/request', { body: { pin_code: alice.user.pin_code } })).body.id;
    ids.contact = (await call(alice, 'post', '/contacts/requests/:id/accept', { params: { id: r } })).body.contact.id;
  });
  afterAll(() => api.close());

  type Method = 'get' | 'post' | 'delete';
  interface Row {
    method: Method;
    path: string;
    resource: keyof typeof ids | string;
    /** A made-up id of the same kind, which must answer exactly like the outsider's request. */
    unknown: string;
    who: 'alice' | 'bob' | 'carol' | 'eve';
    status: 403 | 404;
    code: string;
    body?: unknown;
  }
  const rows: Row[] = [
    {
      method: 'get',
      path: '/conversations/:id',
      resource: 'direct',
      unknown: 'cnv_00000000000000000000',
      who: 'eve',
      status: 404,
      code: 'conversation_not_found',
    },
    {
      method: 'get',
      path: '/conversations/:id',
      resource: 'group',
      unknown: 'cnv_00000000000000000000',
      who: 'eve',
      status: 404,
      code: 'conversation_not_found',
    },
    {
      method: 'get',
      path: '/conversations/:id/messages',
      resource: 'direct',
      unknown: 'cnv_00000000000000000000',
      who: 'eve',
      status: 404,
      code: 'conversation_not_found',
    },
    {
      method: 'get',
      path: '/conversations/:id/messages',
      resource: 'group',
      unknown: 'cnv_00000000000000000000',
      who: 'eve',
      status: 404,
      code: 'conversation_not_found',
    },
    {
      method: 'post',
      path: '/conversations/:id/messages',
      resource: 'direct',
      unknown: 'cnv_00000000000000000000',
      who: 'carol',
      status: 404,
      code: 'conversation_not_found',
      body: { content: 'let me in' },
    },
    {
      method: 'post',
      path: '/conversations/:id/messages',
      resource: 'group',
      unknown: 'cnv_00000000000000000000',
      who: 'eve',
      status: 404,
      code: 'conversation_not_found',
      body: { content: 'let me in' },
    },
    {
      method: 'post',
      path: '/conversations/:id/leave',
      resource: 'group',
      unknown: 'cnv_00000000000000000000',
      who: 'eve',
      status: 404,
      code: 'conversation_not_found',
    },
    {
      method: 'post',
      path: '/conversations/:id/leave',
      resource: 'direct',
      unknown: 'cnv_00000000000000000000',
      who: 'carol',
      status: 404,
      code: 'conversation_not_found',
    },
    {
      method: 'post',
      path: '/introductions/:id/accept',
      resource: 'intro',
      unknown: 'int_00000000000000000000',
      who: 'eve',
      status: 404,
      code: 'introduction_not_found',
    },
    {
      method: 'post',
      path: '/introductions/:id/decline',
      resource: 'intro',
      unknown: 'int_00000000000000000000',
      who: 'eve',
      status: 404,
      code: 'introduction_not_found',
    },
    {
      method: 'post',
      path: '/introductions/:id/accept',
      resource: 'intro',
      unknown: '',
      who: 'alice',
      status: 403,
      code: 'forbidden',
    },
    {
      method: 'post',
      path: '/introductions/:id/decline',
      resource: 'intro',
      unknown: '',
      who: 'alice',
      status: 403,
      code: 'forbidden',
    },
    {
      method: 'post',
      path: '/contacts/requests/:id/accept',
      resource: 'request',
      unknown: 'creq_00000000000000000000',
      who: 'eve',
      status: 404,
      code: 'contact_request_not_found',
    },
    {
      method: 'post',
      path: '/contacts/requests/:id/decline',
      resource: 'request',
      unknown: 'creq_00000000000000000000',
      who: 'carol',
      status: 404,
      code: 'contact_request_not_found',
    },
    {
      method: 'post',
      path: '/contacts/requests/:id/accept',
      resource: 'request',
      unknown: '',
      who: 'alice',
      status: 403,
      code: 'forbidden',
    },
    {
      method: 'post',
      path: '/contacts/requests/:id/decline',
      resource: 'request',
      unknown: '',
      who: 'alice',
      status: 403,
      code: 'forbidden',
    },
    {
      method: 'delete',
      path: '/contacts/:id',
      resource: 'contact',
      unknown: 'con_00000000000000000000',
      who: 'bob',
      status: 404,
      code: 'contact_not_found',
    },
    {
      method: 'delete',
      path: '/contacts/:id',
      resource: 'contact',
      unknown: 'con_00000000000000000000',
      who: 'eve',
      status: 404,
      code: 'contact_not_found',
    },
    // An id of another kind is just as unknown.
    {
      method: 'get',
      path: '/conversations/:id',
      resource: 'intro',
      unknown: 'cnv_00000000000000000000',
      who: 'bob',
      status: 404,
      code: 'conversation_not_found',
    },
    {
      method: 'post',
      path: '/introductions/:id/accept',
      resource: 'request',
      unknown: 'int_00000000000000000000',
      who: 'bob',
      status: 404,
      code: 'introduction_not_found',
    },
    {
      method: 'post',
      path: '/contacts/requests/:id/accept',
      resource: 'intro',
      unknown: 'creq_00000000000000000000',
      who: 'bob',
      status: 404,
      code: 'contact_request_not_found',
    },
    {
      method: 'delete',
      path: '/contacts/:id',
      resource: 'request',
      unknown: 'con_00000000000000000000',
      who: 'bob',
      status: 404,
      code: 'contact_not_found',
    },
  ];

  it('covers every route of these areas that takes an :id', () => {
    const withId = [...messagingRoutes, ...introductionRoutes, ...contactRoutes]
      .filter((r) => r.path.includes(':id'))
      .map((r) => `${r.method} ${r.path}`);
    expect(new Set(rows.map((r) => `${r.method} ${r.path}`))).toEqual(new Set(withId));
  });

  it.each(
    rows.map(
      (r) => [`${r.method.toUpperCase()} ${r.path} on ${r.resource} by ${r.who} → ${r.status} ${r.code}`, r] as const,
    ),
  )('%s', async (_name, row) => {
    const who = { alice, bob, carol, eve }[row.who];
    const before = socialState(api.store);
    const opts = { params: { id: ids[row.resource] ?? row.resource }, body: row.body };
    const res = await call(who, row.method, row.path, opts);
    expect(res.status).toBe(row.status);
    expect(res.body.error.code).toBe(row.code);
    expect(socialState(api.store)).toBe(before);
    if (row.unknown) {
      const ghost = await call(who, row.method, row.path, { ...opts, params: { id: row.unknown } });
      expect(ghost.status).toBe(res.status);
      expect(ghost.body).toEqual(res.body); // indistinguishable from a resource that does not exist
    }
  });

  it('the parties can still do all of it (the matrix is not 404 for everyone)', async () => {
    expect((await call(bob, 'get', '/conversations/:id', { params: { id: ids.direct! } })).status).toBe(200);
    expect((await call(carol, 'get', '/conversations/:id/messages', { params: { id: ids.group! } })).status).toBe(200);
    expect(
      (
        await call(carol, 'post', '/conversations/:id/messages', {
          params: { id: ids.group! },
          body: { content: 'hi' },
        })
      ).status,
    ).toBe(201);
    expect((await call(bob, 'post', '/introductions/:id/accept', { params: { id: ids.intro! } })).status).toBe(200);
    expect((await call(bob, 'post', '/contacts/requests/:id/accept', { params: { id: ids.request! } })).status).toBe(
      200,
    );
    expect((await call(carol, 'delete', '/contacts/:id', { params: { id: ids.contact! } })).status).toBe(200);
  });

  it('lists never show a stranger anything of others', async () => {
    for (const path of [
      '/conversations',
      '/introductions',
      '/introductions/pending',
      '/contacts',
      '/contacts/requests/pending',
    ]) {
      const res = await call(eve, 'get', path);
      const [list] = Object.values(res.body) as unknown[][];
      expect(list, path).toEqual([]);
    }
  });
});
