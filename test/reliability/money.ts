import type { RouteDef } from '../../src/api/route.js';
import type { DomainEnv } from '../../src/domain/env.js';
import type { User } from '../../src/domain/users/users.js';
import type { ReadView } from '../../src/store/types.js';
import { call } from './http.js';

const cents = (x: unknown) => Math.round(Number(x) * 100);

/**
 * Reads a user's balance by calling the handler of `GET /wallet/balance` from the route table
 * directly (no HTTP, no rate limit), or undefined when this build has no wallet. Used to check
 * that rejected requests move no money.
 */
export function balanceReader(routes: readonly RouteDef[], db: ReadView, env: DomainEnv): ((user: User) => number) | undefined {
  const route = routes.find((r) => r.method === 'get' && r.path === '/wallet/balance');
  if (!route || route.write) return undefined;
  return (user) => cents((route.handler({ user, body: {}, query: {}, params: {}, env, db }).body as { balance: number }).balance);
}

export interface MoneyFigures {
  users: number;
  transactions: number;
  /** Sums in cents. */
  balances: number;
  pending: number;
  credits: number;
  holds: boolean;
}

interface Txn {
  id: string;
  type: string;
  amount: number;
  status: string;
}

/**
 * The money invariant through the API (API.md "Money"): sum of balances + sum of pending
 * transfers = every UBI credit + every operator grant. Reads each user's balance and pages
 * through each user's transactions (`before`, 200 a page). Undefined without a wallet.
 *
 * @example
 * const m = await moneyInvariant(url, keys); if (m && !m.holds) throw new Error('money leaked');
 */
export async function moneyInvariant(baseUrl: string, keys: readonly string[]): Promise<MoneyFigures | undefined> {
  const txns = new Map<string, Txn>();
  let balances = 0;
  for (const key of keys) {
    const bal = await call(baseUrl, 'GET', '/api/v1/wallet/balance', key);
    if (bal.status === 404) return undefined;
    if (bal.status !== 200) throw new Error(`GET /wallet/balance answered ${bal.status}: ${bal.text}`);
    balances += cents((bal.json as { balance: number }).balance);
    let before = '';
    for (;;) {
      const page = await call(baseUrl, 'GET', `/api/v1/wallet/transactions?limit=200${before ? `&before=${before}` : ''}`, key);
      if (page.status !== 200) throw new Error(`GET /wallet/transactions answered ${page.status}: ${page.text}`);
      const body = page.json as { transactions: Txn[]; has_more: boolean };
      for (const t of body.transactions) txns.set(t.id, t);
      if (!body.has_more || body.transactions.length === 0) break;
      before = body.transactions[body.transactions.length - 1]!.id;
    }
  }
  let pending = 0;
  let credits = 0;
  for (const t of txns.values()) {
    if (t.type === 'transfer' && t.status === 'pending') pending += cents(t.amount);
    if ((t.type === 'ubi' || t.type === 'grant') && t.status === 'accepted') credits += cents(t.amount);
  }
  return { users: keys.length, transactions: txns.size, balances, pending, credits, holds: balances + pending === credits };
}
