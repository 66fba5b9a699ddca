import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contactRoutes } from '../../src/api/contacts/routes.js';
import { introductionRoutes } from '../../src/api/introductions/routes.js';
import { messagingRoutes } from '../../src/api/messaging/routes.js';
import { testApi, type TestApi } from '../helpers/api.js';
import { caller, conform, socialState } from '../helpers/social.js';

type Who = Awaited<ReturnType<TestApi['user']>>;

/**
 * Bad input on every POST (and the DELETE) of messaging, introductions and contacts: a 4xx with
 * the catalogue error body (details naming the field for schema errors), never a 5xx, and the
 * store unchanged.
 */
describe('bad input table', () => {
  let api: TestApi;
  let call: ReturnType<typeof caller>;
  let alice: Who, bob: Who, carol: Who;
  const ctx: Record<string, string> = {};

  beforeAll(async () => {
    api = await testApi({ memory: true, config: { messaging: { max_length: 20, max_group_size: 4 } } });
    call = caller(api);
    [alice, bob, carol] = [await api.user('Alice'), await api.user('Bob'), await api.user('Carol')];
    ctx.me = alice.user.pin_code;
    ctx.bob = bob.user.pin_code;
    ctx.carol = carol.user.pin_code;
    ctx.conv = (await call(alice, 'post', '/conversations', { body: { participant_pin: bob.user.pin_code } })).body.id;
    ctx.intro = (
      await call(carol, 'post', '/introductions', {
        body: { participant_pins: [alice.user.pin_code, bob.user.pin_code] },
      })
    ).body.id;
    ctx.request = (await call(bob, 'post', '/contacts/request', { body: { pin_code: alice.user.pin_code } })).body.id;
  });
  afterAll(() => api.close());

  interface Row {
    path: string;
    method?: 'post' | 'delete';
    id?: string;
    /** A JSON value, or a raw string sent as is with Content-Type: application/json. */
    body?: unknown;
    raw?: string;
    status: number;
    code: string;
    /** A `details[].path` the error must name. */
    field?: string;
  }
  const pins = (...names: string[]) => names.map((n) => `{${n}}`);
  const long = (n: number) => 'x'.repeat(n);
  const rows: Row[] = [
    // POST /messages/send
    { path: '/messages/send', body: {}, status: 400, code: 'validation_failed', field: 'body.recipient_pin' },
    {
      path: '/messages/send',
      body: { recipient_pin: '{bob}' },
      status: 400,
      code: 'validation_failed',
      field: 'body.content',
    },
    {
      path: '/messages/send',
      body: { recipient_pin: '{bob}', content: '' },
      status: 400,
      code: 'validation_failed',
      field: 'body.content',
    },
    {
      path: '/messages/send',
      body: { recipient_pin: '{bob}', content: ' \n\t ' },
      status: 400,
      code: 'validation_failed',
      field: 'body.content',
    },
    {
      path: '/messages/send',
      body: { recipient_pin: '{bob}', content: long(21) },
      status: 400,
      code: 'validation_failed',
      field: 'body.content',
    },
    {
      path: '/messages/send',
      body: { recipient_pin: '{bob}', content: 42 },
      status: 400,
      code: 'validation_failed',
      field: 'body.content',
    },
    {
      path: '/messages/send',
      body: { recipient_pin: 123456, content: 'hi' },
      status: 400,
      code: 'validation_failed',
      field: 'body.recipient_pin',
    },
    {
      path: '/messages/send',
      body: { recipient_pin: '', content: 'hi' },
      status: 400,
      code: 'validation_failed',
      field: 'body.recipient_pin',
    },
    {
      path: '/messages/send',
      body: { recipient_pin: '{bob}', content: 'hi', to: 'x' },
      status: 400,
      code: 'validation_failed',
      field: 'body.to',
    },
    { path: '/messages/send', body: { recipient_pin: 'ZZZZZZZ', content: 'hi' }, status: 404, code: 'user_not_found' },
    { path: '/messages/send', body: { recipient_pin: '{me}', content: 'hi' }, status: 400, code: 'cannot_target_self' },
    { path: '/messages/send', body: ['hi'], status: 400, code: 'validation_failed' },
    { path: '/messages/send', raw: '{"recipient_pin": "X", ', status: 400, code: 'invalid_json' },
    {
      path: '/messages/send',
      raw: JSON.stringify({ recipient_pin: 'X', content: long(110_000) }),
      status: 413,
      code: 'payload_too_large',
    },
    // POST /conversations
    { path: '/conversations', body: {}, status: 400, code: 'validation_failed', field: 'body' },
    {
      path: '/conversations',
      body: { participant_pin: '{bob}', participant_pins: pins('carol'), name: 'x' },
      status: 400,
      code: 'validation_failed',
      field: 'body',
    },
    {
      path: '/conversations',
      body: { participant_pin: '{bob}', name: 'x' },
      status: 400,
      code: 'validation_failed',
      field: 'body.name',
    },
    {
      path: '/conversations',
      body: { participant_pins: pins('bob') },
      status: 400,
      code: 'validation_failed',
      field: 'body.name',
    },
    {
      path: '/conversations',
      body: { participant_pins: pins('bob'), name: '' },
      status: 400,
      code: 'validation_failed',
      field: 'body.name',
    },
    {
      path: '/conversations',
      body: { participant_pins: pins('bob'), name: '   ' },
      status: 400,
      code: 'validation_failed',
      field: 'body.name',
    },
    {
      path: '/conversations',
      body: { participant_pins: pins('bob'), name: long(101) },
      status: 400,
      code: 'validation_failed',
      field: 'body.name',
    },
    {
      path: '/conversations',
      body: { participant_pins: [], name: 'g' },
      status: 400,
      code: 'validation_failed',
      field: 'body.participant_pins',
    },
    {
      path: '/conversations',
      body: { participant_pins: '{bob}', name: 'g' },
      status: 400,
      code: 'validation_failed',
      field: 'body.participant_pins',
    },
    {
      path: '/conversations',
      body: { participant_pins: ['{bob}', ' {bob}'], name: 'g' },
      status: 400,
      code: 'validation_failed',
      field: 'body.participant_pins.1',
    },
    {
      path: '/conversations',
      body: { participant_pins: ['{bob}', '{bob}'], name: 'g' },
      status: 400,
      code: 'validation_failed',
      field: 'body.participant_pins.1',
    },
    {
      path: '/conversations',
      body: { participant_pins: ['{bob}', '{carol}', 'AAAAAA', 'BBBBBB'], name: 'g' },
      status: 400,
      code: 'validation_failed',
      field: 'body.participant_pins',
    },
    {
      path: '/conversations',
      body: { participant_pins: ['{bob}', '{me}'], name: 'g' },
      status: 400,
      code: 'cannot_target_self',
    },
    {
      path: '/conversations',
      body: { participant_pins: ['{bob}', 'ZZZZZZZ'], name: 'g' },
      status: 404,
      code: 'user_not_found',
    },
    { path: '/conversations', body: { participant_pin: '{me}' }, status: 400, code: 'cannot_target_self' },
    { path: '/conversations', body: { participant_pin: 'ZZZZZZZ' }, status: 404, code: 'user_not_found' },
    {
      path: '/conversations',
      body: { participant_pin: ['{bob}'] },
      status: 400,
      code: 'validation_failed',
      field: 'body.participant_pin',
    },
    {
      path: '/conversations',
      body: { participant_pin: '{bob}', type: 'direct' },
      status: 400,
      code: 'validation_failed',
      field: 'body.type',
    },
    { path: '/conversations', raw: 'not json', status: 400, code: 'invalid_json' },
    // POST /conversations/:id/messages
    {
      path: '/conversations/:id/messages',
      id: '{conv}',
      body: {},
      status: 400,
      code: 'validation_failed',
      field: 'body.content',
    },
    {
      path: '/conversations/:id/messages',
      id: '{conv}',
      body: { content: ' ' },
      status: 400,
      code: 'validation_failed',
      field: 'body.content',
    },
    {
      path: '/conversations/:id/messages',
      id: '{conv}',
      body: { content: long(21) },
      status: 400,
      code: 'validation_failed',
      field: 'body.content',
    },
    {
      path: '/conversations/:id/messages',
      id: '{conv}',
      body: { content: null },
      status: 400,
      code: 'validation_failed',
      field: 'body.content',
    },
    {
      path: '/conversations/:id/messages',
      id: '{conv}',
      body: { content: 'hi', sender: 'x' },
      status: 400,
      code: 'validation_failed',
      field: 'body.sender',
    },
    {
      path: '/conversations/:id/messages',
      id: 'not an id',
      body: { content: 'hi' },
      status: 404,
      code: 'conversation_not_found',
    },
    {
      path: '/conversations/:id/messages',
      id: 'cnv_00000000000000000000',
      body: { content: 'hi' },
      status: 404,
      code: 'conversation_not_found',
    },
    { path: '/conversations/:id/messages', id: '{conv}', raw: '{"content": "hi"', status: 400, code: 'invalid_json' },
    // POST /conversations/:id/leave (extension)
    { path: '/conversations/:id/leave', id: '{conv}', status: 400, code: 'cannot_leave_direct' },
    {
      path: '/conversations/:id/leave',
      id: '{conv}',
      body: { now: true },
      status: 400,
      code: 'validation_failed',
      field: 'body.now',
    },
    { path: '/conversations/:id/leave', id: 'cnv_00000000000000000000', status: 404, code: 'conversation_not_found' },
    // POST /introductions
    { path: '/introductions', body: {}, status: 400, code: 'validation_failed', field: 'body.participant_pins' },
    {
      path: '/introductions',
      body: { participant_pins: pins('bob') },
      status: 400,
      code: 'validation_failed',
      field: 'body.participant_pins',
    },
    {
      path: '/introductions',
      body: { participant_pins: ['{bob}', '{bob}'] },
      status: 400,
      code: 'validation_failed',
      field: 'body.participant_pins.1',
    },
    {
      path: '/introductions',
      body: { participant_pins: ['{bob}', '{BOB}'] },
      status: 400,
      code: 'validation_failed',
      field: 'body.participant_pins.1',
    },
    { path: '/introductions', body: { participant_pins: ['{bob}', '{me}'] }, status: 400, code: 'cannot_target_self' },
    { path: '/introductions', body: { participant_pins: ['{bob}', 'ZZZZZZZ'] }, status: 404, code: 'user_not_found' },
    {
      path: '/introductions',
      body: { participant_pins: ['{bob}', '{carol}', 'A1', 'A2', 'A3'] },
      status: 400,
      code: 'validation_failed',
      field: 'body.participant_pins',
    },
    {
      path: '/introductions',
      body: { participant_pins: pins('bob', 'carol'), message: long(1001) },
      status: 400,
      code: 'validation_failed',
      field: 'body.message',
    },
    {
      path: '/introductions',
      body: { participant_pins: pins('bob', 'carol'), message: 7 },
      status: 400,
      code: 'validation_failed',
      field: 'body.message',
    },
    {
      path: '/introductions',
      body: { participant_pins: pins('bob', 'carol'), note: 'x' },
      status: 400,
      code: 'validation_failed',
      field: 'body.note',
    },
    {
      path: '/introductions',
      body: { participant_pins: [1, 2] },
      status: 400,
      code: 'validation_failed',
      field: 'body.participant_pins.0',
    },
    // POST /introductions/:id/accept|decline
    {
      path: '/introductions/:id/accept',
      id: '{intro}',
      body: { accept: true },
      status: 400,
      code: 'validation_failed',
      field: 'body.accept',
    },
    {
      path: '/introductions/:id/decline',
      id: '{intro}',
      body: { reason: 'no' },
      status: 400,
      code: 'validation_failed',
      field: 'body.reason',
    },
    { path: '/introductions/:id/accept', id: 'INT-1', status: 404, code: 'introduction_not_found' },
    { path: '/introductions/:id/decline', id: 'int_00000000000000000000', status: 404, code: 'introduction_not_found' },
    { path: '/introductions/:id/accept', id: '{intro}', raw: '[', status: 400, code: 'invalid_json' },
    // POST /contacts/request
    { path: '/contacts/request', body: {}, status: 400, code: 'validation_failed', field: 'body.pin_code' },
    {
      path: '/contacts/request',
      body: { pin_code: 42 },
      status: 400,
      code: 'validation_failed',
      field: 'body.pin_code',
    },
    {
      path: '/contacts/request',
      body: { pin_code: '' },
      status: 400,
      code: 'validation_failed',
      field: 'body.pin_code',
    },
    {
      path: '/contacts/request',
      body: { pin_code: '{carol}', message: 'hi' },
      status: 400,
      code: 'validation_failed',
      field: 'body.message',
    },
    { path: '/contacts/request', body: { pin_code: '{me}' }, status: 400, code: 'cannot_target_self' },
    { path: '/contacts/request', body: { pin_code: 'ZZZZZZZ' }, status: 404, code: 'user_not_found' },
    { path: '/contacts/request', raw: '"', status: 400, code: 'invalid_json' },
    // POST /contacts/requests/:id/accept|decline, DELETE /contacts/:id
    {
      path: '/contacts/requests/:id/accept',
      id: '{request}',
      body: { ok: 1 },
      status: 400,
      code: 'validation_failed',
      field: 'body.ok',
    },
    {
      path: '/contacts/requests/:id/decline',
      id: '{request}',
      body: { ok: 1 },
      status: 400,
      code: 'validation_failed',
      field: 'body.ok',
    },
    { path: '/contacts/requests/:id/accept', id: '../x', status: 404, code: 'contact_request_not_found' },
    {
      path: '/contacts/requests/:id/decline',
      id: 'creq_00000000000000000000',
      status: 404,
      code: 'contact_request_not_found',
    },
    { method: 'delete', path: '/contacts/:id', id: 'con 1', status: 404, code: 'contact_not_found' },
    { method: 'delete', path: '/contacts/:id', id: 'con_00000000000000000000', status: 404, code: 'contact_not_found' },
  ];

  it('has rows for every POST route of these areas', () => {
    const posts = [...messagingRoutes, ...introductionRoutes, ...contactRoutes]
      .filter((r) => r.method !== 'get')
      .map((r) => `${r.method} ${r.path}`);
    expect(new Set(rows.map((r) => `${r.method ?? 'post'} ${r.path}`))).toEqual(new Set(posts));
  });

  /** Replaces `{name}` placeholders (PINs, ids made in beforeAll) in a row's values. Internal. */
  const fill = (v: unknown): unknown =>
    typeof v === 'string'
      ? v.replace(/\{(\w+)\}/g, (m, k: string) => (k === 'BOB' ? ctx.bob!.toLowerCase() : (ctx[k] ?? m)))
      : Array.isArray(v)
        ? v.map(fill)
        : v && typeof v === 'object'
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x)]))
          : v;

  it.each(
    rows.map(
      (r) =>
        [
          `${(r.method ?? 'post').toUpperCase()} ${r.path} ` +
            `${
              r.raw !== undefined ? `raw ${r.raw.slice(0, 24)}` : JSON.stringify(r.body ?? null).slice(0, 90)
            } → ${r.status} ${r.code}`,
          r,
        ] as const,
    ),
  )('%s', async (_name, row) => {
    const method = row.method ?? 'post';
    const before = socialState(api.store);
    let res;
    if (row.raw !== undefined) {
      const path = row.path.replace(':id', encodeURIComponent(fill(row.id) as string));
      res = await api.http[method](`/api/v1${path}`)
        .set(alice.headers)
        .set('Content-Type', 'application/json')
        .send(row.raw);
      conform(method, row.path, res);
    } else {
      res = await call(alice, method, row.path, { params: { id: fill(row.id ?? '') as string }, body: fill(row.body) });
    }
    expect(res.status).toBe(row.status);
    expect(res.body.error.code).toBe(row.code);
    if (row.field) expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(row.field);
    expect(socialState(api.store)).toBe(before);
  });
});
