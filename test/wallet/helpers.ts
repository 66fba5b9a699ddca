import { grantMoney } from '../../src/domain/wallet/grants.js';
import type { TestApi } from '../helpers/api.js';

/** A user of `api` with `amount` (units) granted by the operator. */
export async function funded(api: TestApi, name: string, amount = 0) {
  const u = await api.user(name);
  if (amount > 0) await api.store.transaction((tx) => grantMoney(tx, api.env, u.user.id, Math.round(amount * 100)));
  return u;
}

/** The balance a user reads from the API. */
export async function balanceOf(api: TestApi, headers: Record<string, string>): Promise<number> {
  const res = await api.http.get('/api/v1/wallet/balance').set(headers).expect(200);
  return res.body.balance as number;
}
