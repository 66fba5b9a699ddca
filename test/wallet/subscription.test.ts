import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../src/admin/commands.js';
import { compileResponse } from '../../src/api/validation.js';
import { balanceSchema, subscriptionSchema } from '../../src/api/wallet/schemas.js';
import { testApi, type TestApi } from '../helpers/api.js';

const checkSub = compileResponse(subscriptionSchema);
const checkBalance = compileResponse(balanceSchema);

describe('subscription', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await testApi();
  });
  afterAll(() => api.close());

  const sub = async (headers: Record<string, string>) =>
    (await api.http.get('/api/v1/wallet/subscription').set(headers).expect(200)).body;
  const bal = async (headers: Record<string, string>) =>
    (await api.http.get('/api/v1/wallet/balance').set(headers).expect(200)).body;
  const subscribe = (pin: string, days: number | string) =>
    runAdminCommand({ store: api.store, env: api.env }, 'users.subscribe', { pin, days });

  it('a new user gets the 30-day trial; days are decimal; it expires after end_date', async () => {
    api.clock.set(Date.parse('2026-11-21T12:00:00Z'));
    const u = await api.user('Trial');
    const s = await sub(u.headers);
    expect(checkSub(s)).toBe(true);
    expect(s).toEqual({ is_subscribed: true, status: 'active', start_date: '2026-11-21', end_date: '2026-12-21' });
    const b = await bal(u.headers);
    expect(checkBalance(b)).toBe(true);
    expect(b).toEqual({ balance: 0, subscription_days: 30.5, is_subscribed: true, next_shmita: '2029-09-09' });

    api.clock.set(Date.parse('2026-12-21T23:59:00Z')); // the last minute of end_date: still active
    expect((await sub(u.headers)).status).toBe('active');
    expect((await bal(u.headers)).subscription_days).toBe(0.1);
    api.clock.set(Date.parse('2026-12-22T00:00:00Z'));
    expect(await sub(u.headers)).toEqual({
      is_subscribed: false,
      status: 'expired',
      start_date: '2026-11-21',
      end_date: '2026-12-21',
    });
    expect(await bal(u.headers)).toMatchObject({ subscription_days: 0, is_subscribed: false });

    // Expired: a new period starts today.
    api.clock.set(Date.parse('2027-01-10T06:00:00Z'));
    const renewed = await subscribe(u.user.pin_code, 7);
    expect(renewed).toEqual({
      is_subscribed: true,
      status: 'active',
      start_date: '2027-01-10',
      end_date: '2027-01-17',
    });
    expect((await bal(u.headers)).subscription_days).toBe(7.8);
    // Active: extended from end_date.
    expect(await subscribe(u.user.pin_code.toLowerCase(), 30)).toEqual({
      is_subscribed: true,
      status: 'active',
      start_date: '2027-01-10',
      end_date: '2027-02-16',
    });
    expect(await sub(u.headers)).toMatchObject({ end_date: '2027-02-16' });
  });

  it('trial_days 0 means no subscription until the operator grants one', async () => {
    const none = await testApi({ config: { subscription: { trial_days: 0 } }, memory: true });
    try {
      const u = await none.user('NoTrial');
      expect((await none.http.get('/api/v1/wallet/subscription').set(u.headers).expect(200)).body).toEqual({
        is_subscribed: false,
        status: 'none',
        start_date: null,
        end_date: null,
      });
      expect((await none.http.get('/api/v1/wallet/balance').set(u.headers).expect(200)).body.subscription_days).toBe(0);
      const s = await runAdminCommand({ store: none.store, env: none.env }, 'users.subscribe', {
        pin: u.user.pin_code,
        days: '3',
      });
      expect(s).toEqual({ is_subscribed: true, status: 'active', start_date: '2026-11-21', end_date: '2026-11-24' });
      expect((await none.http.get('/api/v1/wallet/balance').set(u.headers).expect(200)).body.subscription_days).toBe(
        3.5,
      );
    } finally {
      await none.close();
    }
  });

  it('the operator command refuses bad days and unknown PINs', async () => {
    const u = await api.user('Picky');
    for (const days of [0, -1, 1.5, 'abc', 36_501])
      await expect(subscribe(u.user.pin_code, days)).rejects.toThrow(/--days/);
    await expect(subscribe('ZZZZZZ', 3)).rejects.toThrow(/no user has the PIN/);
  });

  it('next_shmita follows the clock', async () => {
    const u = await api.user('Shmita');
    api.clock.set(Date.parse('2029-09-09T23:00:00Z'));
    expect((await bal(u.headers)).next_shmita).toBe('2029-09-09');
    api.clock.set(Date.parse('2029-09-10T00:00:00Z'));
    expect((await bal(u.headers)).next_shmita).toBe('2036-09-21');
  });
});
