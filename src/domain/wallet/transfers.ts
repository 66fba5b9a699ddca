import { byteSize, chargeUsage } from '../quotas.js';
import { DomainError } from '../errors.js';
import type { Tx } from '../../store/core/types.js';
import { newId } from '../../util/ids.js';
import type { DomainEnv } from '../env.js';
import { otherUserByPin, type User } from '../users/users.js';
import { account, adjustBalance } from './accounts.js';
import { formatAmount, parseAmount } from './money.js';
import { Transactions, type TransactionRecord } from './transactions.js';

/**
 * Transfers escrow (API.md "Money"): sending debits the sender at once and leaves the amount
 * pending; the recipient's accept credits it to them, a decline refunds the sender. Each runs
 * inside one store transaction, which is synchronous and serialized, so a transfer resolves at
 * most once even when an accept and a decline race.
 */

export interface SendInput {
  recipient_pin: string;
  amount: unknown;
  note?: string;
}

/**
 * Sends money to another user by PIN: 400 `invalid_amount`, 404 `user_not_found`, 400
 * `cannot_target_self`, 400 `insufficient_funds` — checked in that order, nothing changed on
 * any of them.
 *
 * @example sendMoney(tx, env, alice, { recipient_pin: 'BOB123', amount: 5, note: 'lunch' })
 */
export function sendMoney(tx: Tx, env: DomainEnv, sender: User, input: SendInput): TransactionRecord {
  const cents = parseAmount(input.amount, env.config.wallet.max_transfer);
  const recipient = otherUserByPin(tx, sender, input.recipient_pin);
  const balance = account(tx, sender.id).balance_cents;
  if (balance < cents) {
    throw new DomainError(
      'insufficient_funds',
      `Your balance is ${formatAmount(balance)}, less than the ` +
        `${formatAmount(cents)} you tried to send. Check GET /api/v1/wallet/balance.`,
    );
  }
  if (input.note) chargeUsage(tx, env, sender.id, byteSize(input.note), 'body.note');
  adjustBalance(tx, sender.id, -cents);
  const now = env.clock.now();
  return tx.col(Transactions).insert({
    id: newId('txn'),
    type: 'transfer',
    amount_cents: cents,
    status: 'pending',
    note: input.note ?? '',
    sender_id: sender.id,
    recipient_id: recipient.id,
    created_at: now,
    updated_at: now,
  });
}

/**
 * The transfer `id` that `user` may answer: 404 `transaction_not_found` for anyone not a party
 * (as if it did not exist), 403 `forbidden` for its sender, 409 `transaction_not_pending` once
 * it was answered. Internal.
 */
function answerable(tx: Tx, user: User, id: string): TransactionRecord {
  const t = tx.col(Transactions).get(id);
  if (!t || (t.recipient_id !== user.id && t.sender_id !== user.id)) throw new DomainError('transaction_not_found');
  if (t.recipient_id !== user.id)
    throw new DomainError('forbidden', 'Only the recipient can accept or decline a transfer; you sent this one.');
  if (t.status !== 'pending')
    throw new DomainError('transaction_not_pending', `This transaction is already ${t.status}.`);
  return t;
}

/**
 * The recipient accepts a pending transfer: the amount is credited to them.
 *
 * @example acceptTransfer(tx, env, bob, 'txn_…').status // 'accepted'
 */
export function acceptTransfer(tx: Tx, env: DomainEnv, user: User, id: string): TransactionRecord {
  const t = answerable(tx, user, id);
  adjustBalance(tx, t.recipient_id, t.amount_cents);
  return tx.col(Transactions).update(t.id, { status: 'accepted', updated_at: env.clock.now() });
}

/**
 * The recipient declines a pending transfer: the amount goes back to the sender.
 *
 * @example declineTransfer(tx, env, bob, 'txn_…').status // 'declined'
 */
export function declineTransfer(tx: Tx, env: DomainEnv, user: User, id: string): TransactionRecord {
  const t = answerable(tx, user, id);
  adjustBalance(tx, t.sender_id!, t.amount_cents);
  return tx.col(Transactions).update(t.id, { status: 'declined', updated_at: env.clock.now() });
}
