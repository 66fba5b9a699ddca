import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../src/api/openapi.js';
import { allRoutes } from '../../src/api/routes.js';
import { configFrom } from '../../src/config/load.js';
import { testApi, type TestApi } from '../helpers/api.js';
import { docValidator, eachOperation, type Doc, type Schema } from './doc-ajv.js';

const doc = buildOpenApi(allRoutes, configFrom({})) as unknown as Doc;
const op = (method: string, path: string) => doc.paths[`/api/v1${path}`]![method]!;
const deref = (s: Schema): Schema =>
  typeof s.$ref === 'string' ? doc.components.schemas[s.$ref.replace('#/components/schemas/', '')]! : s;

describe('operations that take no body document none (issue 13, item 17)', () => {
  const bodyless = [
    '/wallet/transactions/{id}/accept',
    '/wallet/transactions/{id}/decline',
    '/introductions/{id}/accept',
    '/introductions/{id}/decline',
    '/contacts/requests/{id}/accept',
    '/contacts/requests/{id}/decline',
    '/conversations/{id}/leave',
  ];

  it.each(bodyless)('POST %s has no requestBody', (path) => {
    expect(op('post', path).requestBody).toBeUndefined();
  });

  it('every other POST documents a required JSON body', () => {
    const posts = eachOperation(doc).filter((o) => o.method === 'post' && !bodyless.some((b) => o.path.endsWith(b)));
    expect(posts.length).toBe(6);
    for (const o of posts) expect(o.op.requestBody, o.path).toMatchObject({ required: true });
  });

  it('the server takes them without a body (and still refuses fields in one)', async () => {
    const api = await testApi({ memory: true });
    try {
      const alice = await api.user('Alice');
      const res = await api.http
        .post('/api/v1/wallet/transactions/txn_00000000000000000000/accept')
        .set(alice.headers)
        .expect(404);
      expect(res.body.error.code).toBe('transaction_not_found');
      const extra = await api.http
        .post('/api/v1/wallet/transactions/txn_00000000000000000000/accept')
        .set(alice.headers)
        .send({ reason: 'x' })
        .expect(400);
      expect(extra.body.error.details[0].path).toBe('body.reason');
    } finally {
      await api.close();
    }
  });
});

describe('response headers are documented (issue 13, item 18)', () => {
  const refs = (headers: Record<string, { $ref: string }> | undefined) => Object.keys(headers ?? {});

  it(
    'RateLimit and RateLimit-Policy on every 2xx and 4xx; Retry-After on 429; ' +
      'WWW-Authenticate on 401; X-Request-Id everywhere',
    () => {
      for (const { method, path, op: o } of eachOperation(doc)) {
        for (const [status, r] of Object.entries(o.responses)) {
          const at = `${method} ${path} ${status}`;
          const h = refs(r.headers);
          expect(h, at).toContain('X-Request-Id');
          if (Number(status) < 500) expect(h, at).toEqual(expect.arrayContaining(['RateLimit', 'RateLimit-Policy']));
          if (status === '429') expect(h, at).toContain('Retry-After');
          if (status === '401') expect(h, at).toContain('WWW-Authenticate');
          for (const name of h) expect(doc.components.headers[name], `${at} ${name}`).toBeDefined();
        }
      }
      expect(refs(op('post', '/wallet/send').responses['201']!.headers)).toContain('Idempotent-Replayed');
    },
  );

  describe('and the server sends what the document says', () => {
    let api: TestApi;
    beforeAll(async () => {
      api = await testApi({
        memory: true,
        config: {
          rate_limits: { enabled: true, general: { limit: 2, window: '1h' }, anonymous: { limit: 1, window: '1h' } },
        },
      });
    });
    afterAll(() => api.close());

    it('on a 200, a 401 and a 429', async () => {
      const alice = await api.user('Alice');
      const answers = [
        ['200', await api.http.get('/api/v1/me').set(alice.headers).expect(200)],
        ['401', await api.http.get('/api/v1/me').expect(401)],
        [
          '429',
          (await api.http.get('/api/v1/me').set(alice.headers),
          await api.http.get('/api/v1/me').set(alice.headers).expect(429)),
        ],
      ] as const;
      for (const [status, res] of answers) {
        for (const name of refs(op('get', '/me').responses[status]!.headers)) {
          if (name === 'Idempotent-Replayed') continue;
          expect(res.headers[name.toLowerCase()], `${status} ${name}`).toBeDefined();
        }
      }
    });
  });
});

describe('formats and descriptions (issue 13, item 19)', () => {
  it('millisecond timestamps and since are int64', () => {
    expect(doc.components.schemas.Message!.properties).toMatchObject({
      timestamp: { type: 'integer', format: 'int64' },
    });
    const messages = op('get', '/conversations/{id}/messages');
    expect(messages.parameters.find((p) => p.name === 'since')!.schema).toMatchObject({
      type: 'integer',
      format: 'int64',
    });
    expect(
      (messages.responses['200']!.content['application/json']!.schema.properties as Record<string, Schema>).timestamp,
    ).toMatchObject({ format: 'int64' });
  });
});

describe('request schemas are as strict as the server (issue 13, item 20)', () => {
  it('amount: > 0, at most wallet.max_transfer, multiple of 0.01 — from the running config', () => {
    const custom = buildOpenApi(allRoutes, configFrom({ wallet: { max_transfer: 250 } })) as unknown as Doc;
    expect(custom.components.schemas.Amount).toMatchObject({
      type: 'number',
      exclusiveMinimum: 0,
      maximum: 250,
      multipleOf: 0.01,
    });
    const validate = docValidator(custom)({ $ref: 'Amount' });
    expect([0.07, 0.01, 12.5, 250].map((v) => validate(v))).toEqual([true, true, true, true]);
    expect([0, -1, 1.005, 250.01].map((v) => validate(v))).toEqual([false, false, false, false]);
  });

  it('content maxLength and participant_pins maxItems follow messaging.*, with uniqueItems', () => {
    const custom = buildOpenApi(
      allRoutes,
      configFrom({ messaging: { max_length: 500, max_group_size: 10 } }),
    ) as unknown as Doc;
    const body = (method: string, path: string) =>
      custom.paths[`/api/v1${path}`]![method]!.requestBody!.content['application/json']!.schema;
    expect((body('post', '/messages/send').properties as Record<string, Schema>).content).toMatchObject({
      maxLength: 500,
    });
    expect((body('post', '/conversations/{id}/messages').properties as Record<string, Schema>).content).toMatchObject({
      maxLength: 500,
    });
    expect((body('post', '/conversations').properties as Record<string, Schema>).participant_pins).toMatchObject({
      maxItems: 9,
      uniqueItems: true,
    });
    expect((body('post', '/introductions').properties as Record<string, Schema>).participant_pins).toMatchObject({
      maxItems: 10,
      uniqueItems: true,
    });
  });

  it('POST /conversations takes exactly one of its two shapes', () => {
    const schema = op('post', '/conversations').requestBody!.content['application/json']!.schema;
    const validate = docValidator(doc)(schema);
    expect(validate({ participant_pin: 'ABC123' })).toBe(true);
    expect(validate({ participant_pins: ['ABC123'], name: 'g' })).toBe(true);
    for (const bad of [
      {},
      { participant_pin: 'ABC123', name: 'g' },
      { participant_pins: ['ABC123'] },
      { participant_pin: 'A', participant_pins: ['B'], name: 'g' },
    ])
      expect(validate(bad), JSON.stringify(bad)).toBe(false);
    expect(deref(schema).oneOf).toHaveLength(2);
  });

  it('the server refuses the same, with its own codes: a 3-decimal amount stays 400 invalid_amount', async () => {
    const api = await testApi({ memory: true, config: { messaging: { max_length: 5 } } });
    try {
      const [alice, bob] = [await api.user('Alice'), await api.user('Bob')];
      const amount = await api.http
        .post('/api/v1/wallet/send')
        .set(alice.headers)
        .send({ recipient_pin: bob.user.pin_code, amount: 1.005 })
        .expect(400);
      expect(amount.body.error.code).toBe('invalid_amount');
      const long = await api.http
        .post('/api/v1/messages/send')
        .set(alice.headers)
        .send({ recipient_pin: bob.user.pin_code, content: '😀😀😀😀😀😀' })
        .expect(400);
      expect(long.body.error.details.map((d: { path: string }) => d.path)).toEqual(['body.content']);
      await api.http
        .post('/api/v1/messages/send')
        .set(alice.headers)
        .send({ recipient_pin: bob.user.pin_code, content: '😀😀😀😀😀' })
        .expect(201);
    } finally {
      await api.close();
    }
  });
});
