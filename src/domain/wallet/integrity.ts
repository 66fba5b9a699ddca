import type { StoreIntegrity } from '../../store/core/integrity.js';
import type { StoredRecord } from '../../store/core/types.js';
import { Accounts, type Account } from './accounts.js';
import { Transactions, type TransactionRecord } from './transactions.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TYPES = new Set(['transfer', 'ubi', 'grant']);
const STATUSES = new Set(['pending', 'accepted', 'declined']);
const cents = (n: unknown) => Number.isSafeInteger(n);

/** What is wrong with a stored account, if anything. */
function accountProblem(r: StoredRecord): string | undefined {
  const a = r as Account;
  if (!cents(a.balance_cents) || a.balance_cents < 0)
    return `balance_cents is ${JSON.stringify(a.balance_cents)}, not whole cents ≥ 0`;
  if (a.ubi_through !== null && !(typeof a.ubi_through === 'string' && DATE.test(a.ubi_through)))
    return `ubi_through is ${JSON.stringify(a.ubi_through)}, not null or YYYY-MM-DD`;
  return undefined;
}

/** What is wrong with a stored transaction, if anything. */
function transactionProblem(r: StoredRecord): string | undefined {
  const t = r as TransactionRecord;
  if (!TYPES.has(t.type)) return `type is ${JSON.stringify(t.type)}`;
  if (!STATUSES.has(t.status)) return `status is ${JSON.stringify(t.status)}`;
  if (!cents(t.amount_cents) || t.amount_cents <= 0)
    return `amount_cents is ${JSON.stringify(t.amount_cents)}, not whole cents > 0`;
  if (typeof t.recipient_id !== 'string') return 'recipient_id is not a string';
  if (t.type === 'transfer' ? typeof t.sender_id !== 'string' : t.sender_id !== null)
    return `sender_id ${JSON.stringify(t.sender_id)} does not fit a ${t.type}`;
  return undefined;
}

/**
 * What one record adds to `balances + pending − UBI − grants`, which is 0 when money is
 * conserved: a balance counts as itself, a pending transfer as its amount (escrowed), a UBI
 * credit or a grant as minus its amount. Internal.
 */
function weight(collection: string, r: StoredRecord | null | undefined): number {
  if (!r) return 0;
  if (collection === Accounts.name) return (r as Account).balance_cents;
  const t = r as TransactionRecord;
  if (t.type === 'ubi' || t.type === 'grant') return -t.amount_cents;
  return t.status === 'pending' ? t.amount_cents : 0;
}

/**
 * The wallet's start-up checks for the store (it stores money as integer cents in
 * `wallet_accounts.balance_cents`; every credit is a `ubi` or `grant` transaction; a transfer
 * escrows its amount while `pending`): record shapes, and conservation — every journal line
 * keeps `balances + pending = UBI + grants`, and so does the snapshot.
 *
 * @example FileStore.open(dir, { integrity: { ...walletIntegrity, collections } })
 */
export const walletIntegrity: Required<Pick<StoreIntegrity, 'records' | 'conserved' | 'verify'>> = {
  records: { [Accounts.name]: accountProblem, [Transactions.name]: transactionProblem },
  conserved: {
    what: 'money (balances + pending − UBI − grants, in cents)',
    collections: [Accounts.name, Transactions.name],
    delta: (collection, before, after) => weight(collection, after) - weight(collection, before),
  },
  verify(records) {
    const sum = moneyTotals(records);
    if (sum.balances + sum.pending === sum.credits) return undefined;
    return (
      `money does not add up: balances ${sum.balances} + pending ${sum.pending} ≠ UBI ` +
      `+ grants ${sum.credits} (cents)`
    );
  },
};

/**
 * The wallet's totals in cents: balances, pending transfers (escrowed) and credits (UBI and
 * grants). Money is conserved when `balances + pending === credits`.
 */
export function moneyTotals(records: (collection: string) => Iterable<StoredRecord>): {
  balances: number;
  pending: number;
  credits: number;
} {
  const sum = { balances: 0, pending: 0, credits: 0 };
  for (const a of records(Accounts.name)) sum.balances += (a as Account).balance_cents;
  for (const r of records(Transactions.name)) {
    const t = r as TransactionRecord;
    if (t.type !== 'transfer') sum.credits += t.amount_cents;
    else if (t.status === 'pending') sum.pending += t.amount_cents;
  }
  return sum;
}
