import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../src/admin/commands.js';
import { compileResponse } from '../../src/api/validation.js';
import { transactionSchema } from '../../src/api/wallet/schemas.js';
import { testApi, type TestApi } from '../helpers/api.js';
import { assertConserved } from '../sim/ledger.js';
import { balanceOf } from './helpers.js';

const checkTxn = compileResponse(transactionSchema);

describe('operator grants', () => {
  let api: TestApi;
  const run = (cmd: string, args: Record<string, unknown>) =>
    runAdminCommand({ store: api.store, env: api.env }, cmd, args);
  beforeAll(async () => {
    api = await testApi();
  });
  afterAll(() => api.close());

  it('users add --balance records a grant in the same transaction as the user', async () => {
    const u = (await run('users.add', { name: 'Rich', balance: '25.50' })) as {
      id: string;
      api_key: string;
      pin_code: string;
    };
    const headers = { 'X-API-Key': u.api_key };
    expect(await balanceOf(api, headers)).toBe(25.5);
    const list = await api.http.get('/api/v1/wallet/transactions').set(headers).expect(200);
    expect(list.body.transactions).toEqual([
      expect.objectContaining({
        type: 'grant',
        amount: 25.5,
        status: 'accepted',
        direction: 'received',
        sender: null,
        sender_pin: null,
        recipient_pin: u.pin_code,
        note: 'starting balance',
      }),
    ]);
    const none = (await run('users.add', { name: 'Poor', balance: '0' })) as { api_key: string };
    expect(
      (await api.http.get('/api/v1/wallet/transactions').set({ 'X-API-Key': none.api_key })).body.transactions,
    ).toEqual([]);
    assertConserved(api.store.read);
  });

  it('users grant returns the grant transaction and credits the balance', async () => {
    const u = (await run('users.add', { name: 'Granted' })) as { id: string; api_key: string; pin_code: string };
    const t = (await run('users.grant', { pin: u.pin_code.toLowerCase(), amount: '7.05' })) as Record<string, unknown>;
    expect(checkTxn(t)).toBe(true);
    expect(t).toMatchObject({
      type: 'grant',
      amount: 7.05,
      status: 'accepted',
      recipient_pin: u.pin_code,
      sender: null,
      created_at: '2026-11-21T12:00:00.000Z',
    });
    expect(await balanceOf(api, { 'X-API-Key': u.api_key })).toBe(7.05);
    expect(assertConserved(api.store.read).grants).toBeGreaterThanOrEqual(705);
  });

  it.each(['0', '-1', '1.005', 'abc', '', '1e3', '1000000000.01'])(
    'refuses --amount %j and --balance %j, changing nothing',
    async (bad) => {
      const u = (await run('users.add', { name: `Target ${JSON.stringify(bad)}` })) as {
        pin_code: string;
        api_key: string;
      };
      await expect(run('users.grant', { pin: u.pin_code, amount: bad })).rejects.toThrow(/--amount must be a number/);
      if (bad !== '0') {
        const before = [
          ...(await api.http.get('/api/v1/wallet/transactions').set({ 'X-API-Key': u.api_key })).body.transactions,
        ];
        await expect(run('users.add', { name: 'Never', balance: bad })).rejects.toThrow(/--balance must be a number/);
        expect(before).toEqual([]);
      }
      expect(await balanceOf(api, { 'X-API-Key': u.api_key })).toBe(0);
    },
  );
});
