import type { RouteDef } from '../../src/api/route.js';
import type { DomainEnv } from '../../src/domain/env.js';
import type { User } from '../../src/domain/users/users.js';
import type { ReadView } from '../../src/store/core/types.js';
import { call } from './http.js';

const cents = (x: unknown) => Math.round(Number(x) * 100);

/**
 * Reads a user's balance by calling the handler of `GET /wallet/balance` from the route table
 * directly (no HTTP, no rate limit), or undefined when this build has no wallet. Used to check
 * that rejected requests move no money.
 */
export function balanceReader(
  routes: readonly RouteDef[],
  db: ReadView,
  env: DomainEnv,
): ((user: User) => number) | undefined {
  const route = routes.find((r) => r.method === 'get' && r.path === '/wallet/balance');
  if (!route || route.write) return undefined;
  return (user) =>
    cents((route.handler({ user, body: {}, query: {}, params: {}, env, db }).body as { balance: number }).balance);
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

/** A transaction as the API lists it (the fields the invariant needs). */
export interface ListedTxn {
  id: string;
  type: string;
  amount: number;
  status: string;
  note?: string;
}

/**
 * Every user's balance (summed, in cents) and every transaction any of them can see, through
 * the API: `GET /wallet/balance` and `GET /wallet/transactions` paged with `before`, 200 a page.
 * Undefined without a wallet, or when a key no longer works (that user's data is gone).
 */
export async function walletSnapshot(
  baseUrl: string,
  keys: readonly string[],
): Promise<{ balances: number; txns: Map<string, ListedTxn> } | undefined> {
  const txns = new Map<string, ListedTxn>();
  let balances = 0;
  for (const key of keys) {
    const bal = await call(baseUrl, 'GET', '/api/v1/wallet/balance', key);
    if (bal.status === 404 || bal.status === 401) return undefined;
    if (bal.status !== 200) throw new Error(`GET /wallet/balance answered ${bal.status}: ${bal.text}`);
    balances += cents((bal.json as { balance: number }).balance);
    let before = '';
    for (;;) {
      const page = await call(
        baseUrl,
        'GET',
        `/api/v1/wallet/transactions?limit=200${before ? `&before=${before}` : ''}`,
        key,
      );
      if (page.status !== 200) throw new Error(`GET /wallet/transactions answered ${page.status}: ${page.text}`);
      const body = page.json as { transactions: ListedTxn[]; has_more: boolean };
      for (const t of body.transactions) txns.set(t.id, t);
      if (!body.has_more || body.transactions.length === 0) break;
      before = body.transactions[body.transactions.length - 1]!.id;
    }
  }
  return { balances, txns };
}

/** The invariant over a snapshot: balances + pending transfers = UBI + grants (cents). */
export function invariantOf(snap: { balances: number; txns: Map<string, ListedTxn> }, users: number): MoneyFigures {
  let pending = 0;
  let credits = 0;
  for (const t of snap.txns.values()) {
    if (t.type === 'transfer' && t.status === 'pending') pending += cents(t.amount);
    if ((t.type === 'ubi' || t.type === 'grant') && t.status === 'accepted') credits += cents(t.amount);
  }
  return {
    users,
    transactions: snap.txns.size,
    balances: snap.balances,
    pending,
    credits,
    holds: snap.balances + pending === credits,
  };
}

/**
 * The money invariant through the API (API.md "Money"): sum of balances + sum of pending
 * transfers = every UBI credit + every operator grant. Undefined without a wallet.
 *
 * @example
 * const m = await moneyInvariant(url, keys); if (m && !m.holds) throw new Error('money leaked');
 */
export async function moneyInvariant(baseUrl: string, keys: readonly string[]): Promise<MoneyFigures | undefined> {
  const snap = await walletSnapshot(baseUrl, keys);
  return snap && invariantOf(snap, keys.length);
}
