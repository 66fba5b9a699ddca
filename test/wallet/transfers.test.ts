import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileResponse } from '../../src/api/validation.js';
import { pageSchema, pendingSchema, transactionResult } from '../../src/api/wallet/schemas.js';
import { testApi, type TestApi } from '../helpers/api.js';
import { balanceOf, funded } from './helpers.js';

const checkResult = compileResponse(transactionResult);
const checkPending = compileResponse(pendingSchema);
const checkPage = compileResponse(pageSchema);

describe('wallet transfers', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await testApi();
  });
  afterAll(() => api.close());

  it('send debits at once, pending lists it, accept credits the recipient', async () => {
    const alice = await funded(api, 'Alice', 20);
    const bob = await funded(api, 'Bob');
    const sent = await api.http
      .post('/api/v1/wallet/send')
      .set(alice.headers)
      .send({ recipient_pin: bob.user.pin_code.toLowerCase(), amount: 5.25, note: 'lunch' })
      .expect(201);
    expect(checkResult(sent.body)).toBe(true);
    const t = sent.body.transaction;
    expect(t).toMatchObject({
      type: 'transfer',
      amount: 5.25,
      status: 'pending',
      direction: 'sent',
      note: 'lunch',
      sender: { id: alice.user.id, display_name: 'Alice', pin_code: alice.user.pin_code },
      recipient: { id: bob.user.id, display_name: 'Bob', pin_code: bob.user.pin_code },
      sender_pin: alice.user.pin_code,
      recipient_pin: bob.user.pin_code,
      created_at: '2026-11-21T12:00:00.000Z',
    });
    expect(t.id).toMatch(/^txn_/);
    expect(await balanceOf(api, alice.headers)).toBe(14.75);
    expect(await balanceOf(api, bob.headers)).toBe(0);

    const pending = await api.http.get('/api/v1/wallet/pending').set(bob.headers).expect(200);
    expect(checkPending(pending.body)).toBe(true);
    expect(pending.body.pending_transactions).toEqual([
      {
        id: t.id,
        amount: 5.25,
        sender_pin: alice.user.pin_code,
        sender: t.sender,
        note: 'lunch',
        created_at: t.created_at,
      },
    ]);
    expect((await api.http.get('/api/v1/wallet/pending').set(alice.headers)).body.pending_transactions).toEqual([]);

    api.clock.set(api.clock.now() + 60_000);
    const acc = await api.http.post(`/api/v1/wallet/transactions/${t.id}/accept`).set(bob.headers).expect(200);
    expect(checkResult(acc.body)).toBe(true);
    expect(acc.body.transaction).toMatchObject({
      id: t.id,
      status: 'accepted',
      direction: 'received',
      updated_at: '2026-11-21T12:01:00.000Z',
      created_at: t.created_at,
    });
    expect(acc.body.message).toEqual(expect.any(String));
    expect(await balanceOf(api, bob.headers)).toBe(5.25);
    expect(await balanceOf(api, alice.headers)).toBe(14.75);
    expect((await api.http.get('/api/v1/wallet/pending').set(bob.headers)).body.pending_transactions).toEqual([]);

    // Resolved once: neither a second accept nor a decline changes anything.
    const again = await api.http.post(`/api/v1/wallet/transactions/${t.id}/accept`).set(bob.headers).expect(409);
    expect(again.body.error.code).toBe('transaction_not_pending');
    await api.http.post(`/api/v1/wallet/transactions/${t.id}/decline`).set(bob.headers).expect(409);
    expect(await balanceOf(api, bob.headers)).toBe(5.25);
    expect(await balanceOf(api, alice.headers)).toBe(14.75);
  });

  it('decline refunds the sender; the note defaults to ""', async () => {
    const alice = await funded(api, 'Alice', 10);
    const bob = await funded(api, 'Bob');
    const sent = await api.http
      .post('/api/v1/wallet/send')
      .set(alice.headers)
      .send({ recipient_pin: bob.user.pin_code, amount: 10 })
      .expect(201);
    expect(sent.body.transaction.note).toBe('');
    expect(await balanceOf(api, alice.headers)).toBe(0);
    const dec = await api.http
      .post(`/api/v1/wallet/transactions/${sent.body.transaction.id}/decline`)
      .set(bob.headers)
      .send({})
      .expect(200);
    expect(dec.body.transaction).toMatchObject({ status: 'declined', direction: 'received', amount: 10 });
    expect(await balanceOf(api, alice.headers)).toBe(10);
    expect(await balanceOf(api, bob.headers)).toBe(0);
  });

  it('the sender gets 403, a stranger and an unknown id 404, and nothing changes', async () => {
    const alice = await funded(api, 'Alice', 10);
    const bob = await funded(api, 'Bob');
    const eve = await funded(api, 'Eve');
    const sent = await api.http
      .post('/api/v1/wallet/send')
      .set(alice.headers)
      .send({ recipient_pin: bob.user.pin_code, amount: 3 })
      .expect(201);
    const id = sent.body.transaction.id;
    for (const action of ['accept', 'decline']) {
      const asSender = await api.http
        .post(`/api/v1/wallet/transactions/${id}/${action}`)
        .set(alice.headers)
        .expect(403);
      expect(asSender.body.error.code).toBe('forbidden');
      const asStranger = await api.http
        .post(`/api/v1/wallet/transactions/${id}/${action}`)
        .set(eve.headers)
        .expect(404);
      expect(asStranger.body.error.code).toBe('transaction_not_found');
      const unknown = await api.http
        .post(`/api/v1/wallet/transactions/txn_0000000000000000000000/${action}`)
        .set(bob.headers)
        .expect(404);
      expect(unknown.body.error.code).toBe('transaction_not_found');
    }
    // ids are opaque: a malformed one names nothing, like an unknown one (API.md)
    const bad = await api.http.post('/api/v1/wallet/transactions/not-an-id/accept').set(bob.headers).expect(404);
    expect(bad.body.error.code).toBe('transaction_not_found');
    const withBody = await api.http
      .post(`/api/v1/wallet/transactions/${id}/accept`)
      .set(bob.headers)
      .send({ really: true })
      .expect(400);
    expect(withBody.body.error.details).toEqual([{ path: 'body.really', message: expect.any(String) }]);
    expect((await api.http.get('/api/v1/wallet/pending').set(bob.headers)).body.pending_transactions).toHaveLength(1);
    expect(await balanceOf(api, alice.headers)).toBe(7);
  });

  it('an operator grant cannot be accepted or declined again', async () => {
    const carol = await funded(api, 'Carol', 4);
    const list = await api.http.get('/api/v1/wallet/transactions').set(carol.headers).expect(200);
    const grant = list.body.transactions[0];
    expect(grant).toMatchObject({
      type: 'grant',
      status: 'accepted',
      amount: 4,
      direction: 'received',
      sender: null,
      sender_pin: null,
      recipient_pin: carol.user.pin_code,
    });
    await api.http.post(`/api/v1/wallet/transactions/${grant.id}/decline`).set(carol.headers).expect(409);
    expect(await balanceOf(api, carol.headers)).toBe(4);
  });

  it('refuses to overdraw, to pay oneself and unknown PINs, changing nothing', async () => {
    const alice = await funded(api, 'Alice', 5);
    const bob = await funded(api, 'Bob');
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ recipient_pin: bob.user.pin_code, amount: 5.01 }, 400, 'insufficient_funds'],
      [{ recipient_pin: alice.user.pin_code, amount: 1 }, 400, 'cannot_target_self'],
      [{ recipient_pin: 'ZZZZZZ', amount: 1 }, 404, 'user_not_found'],
      [{ recipient_pin: bob.user.pin_code, amount: 1, note: 'x'.repeat(501) }, 400, 'validation_failed'],
      [{ recipient_pin: bob.user.pin_code }, 400, 'validation_failed'],
      [{ amount: 1 }, 400, 'validation_failed'],
      [{ recipient_pin: bob.user.pin_code, amount: 1, memo: 'typo' }, 400, 'validation_failed'],
    ];
    for (const [body, status, code] of cases) {
      const res = await api.http.post('/api/v1/wallet/send').set(alice.headers).send(body);
      expect([res.status, res.body.error?.code], JSON.stringify(body)).toEqual([status, code]);
    }
    expect(await balanceOf(api, alice.headers)).toBe(5);
    await api.http
      .post('/api/v1/wallet/send')
      .set(alice.headers)
      .send({ recipient_pin: bob.user.pin_code, amount: 5, note: 'x'.repeat(500) })
      .expect(201);
    expect(await balanceOf(api, alice.headers)).toBe(0);
  });

  it('pages transactions newest first with limit and before', async () => {
    const alice = await funded(api, 'Alice', 100);
    const bob = await funded(api, 'Bob', 100);
    const ids: string[] = [];
    for (let i = 1; i <= 7; i++) {
      const [from, to] = i % 2 ? [alice, bob] : [bob, alice];
      const r = await api.http
        .post('/api/v1/wallet/send')
        .set(from.headers)
        .send({ recipient_pin: to.user.pin_code, amount: i })
        .expect(201);
      ids.push(r.body.transaction.id);
    }
    const newestFirst = [...ids].reverse();
    const p1 = await api.http.get('/api/v1/wallet/transactions?limit=3').set(alice.headers).expect(200);
    expect(checkPage(p1.body)).toBe(true);
    expect(p1.body.transactions.map((t: { id: string }) => t.id)).toEqual(newestFirst.slice(0, 3));
    expect(p1.body.transactions.map((t: { direction: string }) => t.direction)).toEqual(['sent', 'received', 'sent']);
    expect(p1.body.has_more).toBe(true);
    const p2 = await api.http
      .get(`/api/v1/wallet/transactions?limit=3&before=${p1.body.transactions[2].id}`)
      .set(alice.headers)
      .expect(200);
    expect(p2.body.transactions.map((t: { id: string }) => t.id)).toEqual(newestFirst.slice(3, 6));
    expect(p2.body.has_more).toBe(true);
    const p3 = await api.http
      .get(`/api/v1/wallet/transactions?limit=3&before=${p2.body.transactions[2].id}`)
      .set(alice.headers)
      .expect(200);
    expect(p3.body.transactions.map((t: { id: string; type: string }) => t.type)).toEqual(['transfer', 'grant']);
    expect(p3.body.has_more).toBe(false);
    const all = await api.http.get('/api/v1/wallet/transactions').set(alice.headers).expect(200);
    expect(all.body.transactions).toHaveLength(8);
    expect(all.body.has_more).toBe(false);
    const exact = await api.http.get('/api/v1/wallet/transactions?limit=8').set(alice.headers).expect(200);
    expect(exact.body.has_more).toBe(false);
    for (const q of ['limit=0', 'limit=201', 'limit=abc', 'before=xyz', 'before=msg_123', 'cursor=1']) {
      const res = await api.http.get(`/api/v1/wallet/transactions?${q}`).set(alice.headers);
      expect([q, res.status, res.body.error?.code]).toEqual([q, 400, 'validation_failed']);
    }
  });

  it('requires a key on every wallet route', async () => {
    for (const [method, path] of [
      ['get', '/api/v1/wallet/balance'],
      ['post', '/api/v1/wallet/send'],
      ['get', '/api/v1/wallet/transactions'],
      ['get', '/api/v1/wallet/pending'],
      ['post', '/api/v1/wallet/transactions/txn_1/accept'],
      ['post', '/api/v1/wallet/transactions/txn_1/decline'],
      ['get', '/api/v1/wallet/subscription'],
    ] as const) {
      const res = await api.http[method](path);
      expect([path, res.status]).toEqual([path, 401]);
    }
  });
});
