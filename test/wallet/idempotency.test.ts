import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantMoney } from '../../src/domain/wallet/grants.js';
import { testApi, type TestApi } from '../helpers/api.js';
import { assertConserved } from '../sim/ledger.js';
import { balanceOf, funded } from './helpers.js';

describe('Idempotency-Key on send, accept and decline', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await testApi();
  });
  afterAll(() => api.close());

  it('a retried send pays once and replays the first response byte for byte', async () => {
    const alice = await funded(api, 'Alice', 10);
    const bob = await funded(api, 'Bob');
    const send = () =>
      api.http
        .post('/api/v1/wallet/send')
        .set(alice.headers)
        .set('Idempotency-Key', 'pay-bob-1')
        .send({ recipient_pin: bob.user.pin_code, amount: 4 });
    const first = await send().expect(201);
    const again = await send().expect(201);
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await balanceOf(api, alice.headers)).toBe(6);
    expect((await api.http.get('/api/v1/wallet/pending').set(bob.headers)).body.pending_transactions).toHaveLength(1);

    const other = await api.http
      .post('/api/v1/wallet/send')
      .set(alice.headers)
      .set('Idempotency-Key', 'pay-bob-1')
      .send({ recipient_pin: bob.user.pin_code, amount: 5 })
      .expect(409);
    expect(other.body.error.code).toBe('idempotency_key_reused');
    // The key is per user: Bob may use the same one.
    await api.http
      .post('/api/v1/wallet/send')
      .set(bob.headers)
      .set('Idempotency-Key', 'pay-bob-1')
      .send({ recipient_pin: alice.user.pin_code, amount: 1 })
      .expect(400);
    expect(await balanceOf(api, alice.headers)).toBe(6);
  });

  it('a refused send is replayed as refused even once it would succeed', async () => {
    const alice = await funded(api, 'Alice', 1);
    const bob = await funded(api, 'Bob');
    const send = () =>
      api.http
        .post('/api/v1/wallet/send')
        .set(alice.headers)
        .set('Idempotency-Key', 'k-overdraw')
        .send({ recipient_pin: bob.user.pin_code, amount: 2 });
    const first = await send().expect(400);
    expect(first.body.error.code).toBe('insufficient_funds');
    await api.store.transaction((tx) => grantMoney(tx, api.env, alice.user.id, 500));
    const again = await send().expect(400);
    expect(again.text).toBe(first.text);
    await api.http
      .post('/api/v1/wallet/send')
      .set(alice.headers)
      .set('Idempotency-Key', 'k-overdraw-2')
      .send({ recipient_pin: bob.user.pin_code, amount: 2 })
      .expect(201);
    expect(await balanceOf(api, alice.headers)).toBe(4);
  });

  it('accept and decline retries replay; the other answer is 409 and nothing moves twice', async () => {
    const alice = await funded(api, 'Alice', 10);
    const bob = await funded(api, 'Bob');
    const ids: string[] = [];
    for (const amount of [3, 4]) {
      ids.push(
        (
          await api.http
            .post('/api/v1/wallet/send')
            .set(alice.headers)
            .send({ recipient_pin: bob.user.pin_code, amount })
            .expect(201)
        ).body.transaction.id,
      );
    }
    const accept = () =>
      api.http.post(`/api/v1/wallet/transactions/${ids[0]}/accept`).set(bob.headers).set('Idempotency-Key', 'acc-1');
    const a1 = await accept().expect(200);
    const a2 = await accept().expect(200);
    expect(a2.text).toBe(a1.text);
    expect(await balanceOf(api, bob.headers)).toBe(3);

    const decline = () =>
      api.http.post(`/api/v1/wallet/transactions/${ids[1]}/decline`).set(bob.headers).set('Idempotency-Key', 'dec-1');
    const d1 = await decline().expect(200);
    expect((await decline().expect(200)).text).toBe(d1.text);
    expect(await balanceOf(api, alice.headers)).toBe(7);
    const late = await api.http
      .post(`/api/v1/wallet/transactions/${ids[1]}/accept`)
      .set(bob.headers)
      .set('Idempotency-Key', 'acc-2')
      .expect(409);
    expect(late.body.error.code).toBe('transaction_not_pending');
    // A 409 outcome is stored too: replayed as is.
    const lateAgain = await api.http
      .post(`/api/v1/wallet/transactions/${ids[1]}/accept`)
      .set(bob.headers)
      .set('Idempotency-Key', 'acc-2')
      .expect(409);
    expect(lateAgain.text).toBe(late.text);
    expect(await balanceOf(api, bob.headers)).toBe(3);
    assertConserved(api.store.read);
  });

  it('accept racing decline on a file store: exactly one wins', async () => {
    const alice = await funded(api, 'Alice', 100);
    const bob = await funded(api, 'Bob');
    for (let i = 0; i < 10; i++) {
      const id = (
        await api.http
          .post('/api/v1/wallet/send')
          .set(alice.headers)
          .send({ recipient_pin: bob.user.pin_code, amount: 1 })
          .expect(201)
      ).body.transaction.id;
      const results = await Promise.all([
        api.http.post(`/api/v1/wallet/transactions/${id}/accept`).set(bob.headers),
        api.http.post(`/api/v1/wallet/transactions/${id}/decline`).set(bob.headers),
        api.http.post(`/api/v1/wallet/transactions/${id}/accept`).set(bob.headers).set('Idempotency-Key', `race-${i}`),
        api.http.post(`/api/v1/wallet/transactions/${id}/accept`).set(bob.headers).set('Idempotency-Key', `race-${i}`),
      ]);
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 200).length + statuses.filter((s) => s === 409).length).toBe(4);
      const winners = new Set(results.filter((r) => r.status === 200).map((r) => r.body.transaction.status));
      expect(winners.size).toBe(1);
      // The two keyed requests agree (replay) or the second saw the first running (409 in use).
      const [k1, k2] = [results[2]!, results[3]!];
      if (k2.body.error?.code !== 'idempotency_key_in_use') expect(k2.text).toBe(k1.text);
    }
    const b = await balanceOf(api, bob.headers);
    const a = await balanceOf(api, alice.headers);
    expect(Math.round((a + b) * 100)).toBe(10000);
    assertConserved(api.store.read);
  });
});
