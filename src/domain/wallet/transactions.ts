import { lowerBound } from '../../store/core/engine.js';
import { defineCollection, type ReadView, type Tx } from '../../store/core/types.js';
import { newId } from '../../util/ids.js';
import { iso } from '../../clock/clock.js';
import type { DomainEnv } from '../env.js';
import { publicUser, userById, type PublicUser } from '../users/users.js';
import { adjustBalance } from './accounts.js';
import { toAmount } from './money.js';

export type TransactionType = 'transfer' | 'ubi' | 'grant';
export type StoredTransactionStatus = 'pending' | 'accepted' | 'declined';

/** A stored transaction. Amounts are integer cents; UBI credits and grants have no sender. */
export interface TransactionRecord {
  readonly id: string;
  readonly type: TransactionType;
  readonly amount_cents: number;
  readonly status: StoredTransactionStatus;
  readonly note: string;
  readonly sender_id: string | null;
  readonly recipient_id: string;
  /** UBI only: the UTC date the credit is for; unique per recipient (no day paid twice). */
  readonly ubi_date?: string;
  readonly created_at: number;
  readonly updated_at: number;
}

/** The unique key of a UBI credit: one per (user, date). */
export function ubiKey(userId: string, date: string): string {
  return `${userId}:${date}`;
}

export const Transactions = defineCollection<TransactionRecord>({
  name: 'wallet_transactions',
  unique: { ubi: (t) => (t.type === 'ubi' && t.ubi_date ? ubiKey(t.recipient_id, t.ubi_date) : undefined) },
  multi: {
    // Both parties' histories, in id (= creation) order, for paging with `before`.
    user: (t) => (t.sender_id ? [t.sender_id, t.recipient_id] : t.recipient_id),
    // Incoming transfers awaiting an answer, per recipient.
    pending: (t) => (t.status === 'pending' ? t.recipient_id : undefined),
  },
});

/** The transaction object of the API (API.md "Transaction object"), seen by `viewerId`. */
export interface TransactionView {
  id: string;
  type: TransactionType;
  amount: number;
  status: StoredTransactionStatus;
  direction: 'sent' | 'received';
  note: string;
  sender: PublicUser | null;
  recipient: PublicUser;
  sender_pin: string | null;
  recipient_pin: string;
  created_at: string;
  updated_at: string;
}

/**
 * Renders a stored transaction for the API, `direction` from `viewerId`'s point of view.
 *
 * @example transactionView(db, record, alice.id).direction // 'sent'
 */
export function transactionView(db: ReadView, t: TransactionRecord, viewerId: string): TransactionView {
  const sender = t.sender_id ? publicUser(userById(db, t.sender_id)) : null;
  const recipient = publicUser(userById(db, t.recipient_id));
  return {
    id: t.id,
    type: t.type,
    amount: toAmount(t.amount_cents),
    status: t.status,
    direction: t.sender_id === viewerId ? 'sent' : 'received',
    note: t.note,
    sender,
    recipient,
    sender_pin: sender?.pin_code ?? null,
    recipient_pin: recipient.pin_code,
    created_at: iso(t.created_at),
    updated_at: iso(t.updated_at),
  };
}

/**
 * Records a credit that needs no answer (UBI, operator grant): an `accepted` transaction with
 * no sender, and the recipient's balance raised in the same transaction. Internal to the wallet.
 */
export function recordCredit(
  tx: Tx,
  env: DomainEnv,
  input: { type: 'ubi' | 'grant'; recipientId: string; cents: number; note: string; ubiDate?: string },
): TransactionRecord {
  if (!(Number.isSafeInteger(input.cents) && input.cents > 0))
    throw new Error(`a credit is a positive number of cents, got ${input.cents}`);
  const now = env.clock.now();
  const record = tx.col(Transactions).insert({
    id: newId('txn'),
    type: input.type,
    amount_cents: input.cents,
    status: 'accepted',
    note: input.note,
    sender_id: null,
    recipient_id: input.recipientId,
    ...(input.ubiDate ? { ubi_date: input.ubiDate } : {}),
    created_at: now,
    updated_at: now,
  });
  adjustBalance(tx, input.recipientId, input.cents);
  return record;
}

export interface TransactionPage {
  transactions: TransactionView[];
  has_more: boolean;
}

/**
 * A user's transactions, newest first: at most `limit`, only those older than `before` (a
 * transaction id) when given. Binary search on the per-user index, so the cost does not grow
 * with the history.
 *
 * @example listTransactions(db, alice.id, { limit: 50 })
 */
export function listTransactions(
  db: ReadView,
  userId: string,
  { limit, before }: { limit: number; before?: string },
): TransactionPage {
  const ids = db.col(Transactions).ids('user', userId);
  const end = before === undefined ? ids.length : lowerBound(ids, before);
  const start = Math.max(0, end - limit);
  const transactions: TransactionView[] = [];
  for (let i = end - 1; i >= start; i--)
    transactions.push(transactionView(db, db.col(Transactions).get(ids[i]!)!, userId));
  return { transactions, has_more: start > 0 };
}

/** An entry of `GET /wallet/pending`. */
export interface PendingView {
  id: string;
  amount: number;
  sender_pin: string;
  sender: PublicUser;
  note: string;
  created_at: string;
}

/** Incoming transfers awaiting `userId`'s answer, newest first. */
export function pendingFor(db: ReadView, userId: string): PendingView[] {
  const ids = db.col(Transactions).ids('pending', userId);
  const out: PendingView[] = [];
  for (let i = ids.length - 1; i >= 0; i--) {
    const t = db.col(Transactions).get(ids[i]!)!;
    const sender = publicUser(userById(db, t.sender_id!));
    out.push({
      id: t.id,
      amount: toAmount(t.amount_cents),
      sender_pin: sender.pin_code,
      sender,
      note: t.note,
      created_at: iso(t.created_at),
    });
  }
  return out;
}
