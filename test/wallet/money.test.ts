import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  exactCents,
  formatAmount,
  maxCents,
  parseAmount,
  parseAmountText,
  toAmount,
} from '../../src/domain/wallet/money.js';
import { testApi, type TestApi } from '../helpers/api.js';
import { balanceOf, funded } from './helpers.js';

describe('money as integer cents', () => {
  it.each([
    [5, 500],
    [0.01, 1],
    [0.1, 10],
    [0.29, 29],
    [1.01, 101],
    [12.34, 1234],
    [999999.99, 99999999],
    [1e6, 100000000],
  ])('exactCents(%s) = %s', (n, cents) => {
    expect(exactCents(n)).toBe(cents);
    expect(toAmount(cents)).toBe(n);
  });

  it.each([0.001, 0.1 + 0.2, 1.005, 12.345, Number.NaN, Infinity, 1e300])('exactCents(%s) is not exact', (n) => {
    expect(exactCents(n)).toBeUndefined();
  });

  it('formats and parses operator text without floats', () => {
    expect(formatAmount(0)).toBe('0.00');
    expect(formatAmount(1205)).toBe('12.05');
    expect(formatAmount(-5)).toBe('-0.05');
    expect(parseAmountText('12.5')).toBe(1250);
    expect(parseAmountText(' 7 ')).toBe(700);
    expect(parseAmountText('0.07')).toBe(7);
    for (const bad of ['', '-1', '1.234', '1e3', 'abc', '1,5', '.5', '0x10'])
      expect(parseAmountText(bad), bad).toBeUndefined();
    expect(maxCents(1_000_000)).toBe(100_000_000);
    expect(maxCents(0.29)).toBe(29);
  });

  it('sums of many small transfers stay exact', () => {
    let total = 0;
    for (let i = 0; i < 1000; i++) total += parseAmount(0.1, 10);
    expect(toAmount(total)).toBe(100);
  });
});

describe('bad amounts are 400 and change nothing', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await testApi({ config: { wallet: { max_transfer: 500 } } });
  });
  afterAll(() => api.close());

  it.each<[string, unknown, string]>([
    ['zero', 0, 'invalid_amount'],
    ['negative', -5, 'invalid_amount'],
    ['negative zero', -0, 'invalid_amount'],
    ['three decimals', 1.005, 'invalid_amount'],
    ['a tenth of a cent', 0.001, 'invalid_amount'],
    ['float noise', 0.1 + 0.2, 'invalid_amount'],
    ['over the maximum', 500.01, 'invalid_amount'],
    ['far over the maximum', 1e20, 'invalid_amount'],
    ['a string of digits', '5', 'validation_failed'],
    ['a decimal string', '5.00', 'validation_failed'],
    ['null', null, 'validation_failed'],
    ['a boolean', true, 'validation_failed'],
    ['an object', { value: 5 }, 'validation_failed'],
    ['an array', [5], 'validation_failed'],
  ])('%s', async (_name, amount, code) => {
    const alice = await funded(api, 'Alice', 1000);
    const bob = await funded(api, 'Bob');
    const res = await api.http
      .post('/api/v1/wallet/send')
      .set(alice.headers)
      .send({ recipient_pin: bob.user.pin_code, amount })
      .expect(400);
    expect(res.body.error.code).toBe(code);
    expect(res.body.error.details).toEqual([expect.objectContaining({ path: 'body.amount' })]);
    expect(await balanceOf(api, alice.headers)).toBe(1000);
    expect((await api.http.get('/api/v1/wallet/pending').set(bob.headers)).body.pending_transactions).toEqual([]);
  });

  it('the maximum itself and one cent are fine', async () => {
    const alice = await funded(api, 'Alice', 1000);
    const bob = await funded(api, 'Bob');
    for (const amount of [500, 0.01])
      await api.http
        .post('/api/v1/wallet/send')
        .set(alice.headers)
        .send({ recipient_pin: bob.user.pin_code, amount })
        .expect(201);
    expect(await balanceOf(api, alice.headers)).toBe(499.99);
  });

  it('the bad body JSON is invalid_json', async () => {
    const alice = await funded(api, 'Alice', 10);
    const res = await api.http
      .post('/api/v1/wallet/send')
      .set(alice.headers)
      .set('Content-Type', 'application/json')
      .send('{"amount": 5,')
      .expect(400);
    expect(res.body.error.code).toBe('invalid_json');
  });
});
