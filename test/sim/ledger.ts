import { Accounts } from '../../src/domain/wallet/accounts.js';
import { Transactions } from '../../src/domain/wallet/transactions.js';
import type { ReadView } from '../../src/store/core/types.js';

/** Totals of the books, in cents, straight from the stored records. */
export interface Ledger {
  balances: number;
  pending: number;
  ubi: number;
  grants: number;
}

/**
 * Adds up every account and transaction. Scans whole collections: for tests and audits only.
 * The conservation invariant is `balances + pending === ubi + grants`.
 */
export function ledger(db: ReadView): Ledger {
  const out: Ledger = { balances: 0, pending: 0, ubi: 0, grants: 0 };
  for (const a of db.col(Accounts).all()) {
    if (!Number.isSafeInteger(a.balance_cents) || a.balance_cents < 0)
      throw new Error(`account ${a.id} has balance ${a.balance_cents}`);
    out.balances += a.balance_cents;
  }
  for (const t of db.col(Transactions).all()) {
    if (t.type === 'ubi') out.ubi += t.amount_cents;
    else if (t.type === 'grant') out.grants += t.amount_cents;
    else if (t.status === 'pending') out.pending += t.amount_cents;
  }
  return out;
}

/** Throws when the books do not balance. */
export function assertConserved(db: ReadView, context = ''): Ledger {
  const l = ledger(db);
  if (l.balances + l.pending !== l.ubi + l.grants) {
    throw new Error(
      `conservation broken${context ? ` (${context})` : ''}: balances ${l.balances} ` +
        `+ pending ${l.pending} ≠ ubi ${l.ubi} + grants ${l.grants} (cents)`,
    );
  }
  return l;
}
