import { defineCollection, type ReadView, type Tx } from '../../store/core/types.js';

/**
 * A user's wallet account: the balance in cents, kept up to date in the same transaction as
 * every transaction record that moves money, so reading it is O(1). Its id is the user's id.
 */
export interface Account {
  readonly id: string;
  readonly balance_cents: number;
  /** The last UTC date (`YYYY-MM-DD`) whose UBI was credited, or null before the first. */
  readonly ubi_through: string | null;
}

export const Accounts = defineCollection<Account>({ name: 'wallet_accounts' });

/**
 * The balance of a user in cents (0 for a user who never had money).
 *
 * @example balanceCents(store.read, user.id) // 1250
 */
export function balanceCents(db: ReadView, userId: string): number {
  return db.col(Accounts).get(userId)?.balance_cents ?? 0;
}

/** The account of a user, opened empty on first use. Internal to the wallet. */
export function account(tx: Tx, userId: string): Account {
  const accounts = tx.col(Accounts);
  return accounts.get(userId) ?? accounts.insert({ id: userId, balance_cents: 0, ubi_through: null });
}

/**
 * Adds `cents` (negative to debit) to a balance. A balance never goes below zero: a debit
 * that would is a bug of the caller, which must check first, so it throws and the whole
 * transaction is undone.
 */
export function adjustBalance(tx: Tx, userId: string, cents: number): Account {
  if (!Number.isSafeInteger(cents)) throw new Error(`balance change must be integer cents, got ${cents}`);
  const acc = account(tx, userId);
  const next = acc.balance_cents + cents;
  if (next < 0 || !Number.isSafeInteger(next)) throw new Error(`balance of ${userId} would become ${next} cents`);
  return tx.col(Accounts).update(userId, { balance_cents: next });
}
