import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/api/writes/idempotency.js';
import { testApi, type TestApi } from '../helpers/api.js';
import { Notes, testRoutes } from '../helpers/test-routes.js';

// Issue 13 item 15: query numbers were coerced by ajv (`0x10` was 16, `1e3` 1000, `" 1"` 1), and
// idempotency fingerprints hashed the body in its received key order.
describe('since / limit: decimal integers only', () => {
  let api: TestApi;
  let alice: Awaited<ReturnType<TestApi['user']>>;
  let conv: string;
  beforeAll(async () => {
    api = await testApi();
    alice = await api.user('Alice');
    const bob = await api.user('Bob');
    const sent = await api.http
      .post('/api/v1/messages/send')
      .set(alice.headers)
      .send({ recipient_pin: bob.user.pin_code, content: 'hi' })
      .expect(201);
    conv = sent.body.conversation_id;
  });
  afterAll(() => api.close());

  const get = (path: string) => api.http.get(path).set(alice.headers);

  it.each([
    ['since=0x10', 'query.since'],
    ['since=0b11', 'query.since'],
    ['since=0o17', 'query.since'],
    ['since=1e3', 'query.since'],
    ['since=%201', 'query.since'],
    ['since=1%20', 'query.since'],
    ['since=%2B1', 'query.since'],
    ['since=Infinity', 'query.since'],
    ['since=9007199254740993', 'query.since'],
    ['limit=0x10', 'query.limit'],
    ['limit=1e1', 'query.limit'],
    ['limit=%205', 'query.limit'],
    ['limit=5.0', 'query.limit'],
  ])('GET /conversations/:id/messages?%s is 400 validation_failed naming %s', async (query, path) => {
    const r = await get(`/api/v1/conversations/${conv}/messages?${query}`).expect(400);
    expect(r.body.error.code).toBe('validation_failed');
    expect(r.body.error.details).toEqual([{ path, message: 'must be a whole number in decimal digits, e.g. 50' }]);
  });

  it('GET /wallet/transactions?limit=0x10 is 400 too', async () => {
    const r = await get('/api/v1/wallet/transactions?limit=0x10').expect(400);
    expect(r.body.error.details).toEqual([
      { path: 'query.limit', message: 'must be a whole number in decimal digits, e.g. 50' },
    ]);
  });

  it('plain decimals are read as numbers (leading zeros are still decimal)', async () => {
    const r = await get(`/api/v1/conversations/${conv}/messages?since=0&limit=010`).expect(200);
    expect(r.body.messages).toHaveLength(1);
    expect((await get('/api/v1/wallet/transactions?limit=200').expect(200)).body.has_more).toBe(false);
  });
});

describe('Idempotency-Key fingerprints compare the parsed body canonically', () => {
  let api: TestApi;
  let alice: Awaited<ReturnType<TestApi['user']>>;
  beforeAll(async () => {
    api = await testApi({ routes: testRoutes });
    alice = await api.user('Alice');
  });
  afterAll(() => api.close());

  const post = (key: string, raw: string) =>
    api.http
      .post('/api/v1/test/notes')
      .set(alice.headers)
      .set('Idempotency-Key', key)
      .set('Content-Type', 'application/json')
      .send(raw);
  const count = () => api.store.read.col(Notes).ids('user', alice.user.id).length;

  it('the same fields in another key order are the same request: replayed, not run again', async () => {
    const first = await post('order-1', '{"text":"hello","count":2}').expect(201);
    const before = count();
    const again = await post('order-1', '{"count":2,"text":"hello"}').expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    expect(count()).toBe(before);
  });

  it('a default filled in by the schema does not make a retry differ', async () => {
    const first = await post('order-2', '{"text":"x"}').expect(201);
    const again = await post('order-2', '{"count":1,"text":"x"}').expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
  });

  it('another value is still another request', async () => {
    await post('order-3', '{"text":"a","count":1}').expect(201);
    const r = await post('order-3', '{"count":2,"text":"a"}').expect(409);
    expect(r.body.error.code).toBe('idempotency_key_reused');
  });

  it('canonical JSON sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: [2, { y: 1, x: null }], a: 'é' })).toBe('{"a":"é","b":[2,{"x":null,"y":1}]}');
    expect(canonicalJson([3, 1])).not.toBe(canonicalJson([1, 3]));
  });
});
