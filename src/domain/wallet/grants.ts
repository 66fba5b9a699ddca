import type { Tx } from '../../store/core/types.js';
import type { DomainEnv } from '../env.js';
import { formatAmount, MAX_GRANT, CENTS } from './money.js';
import { recordCredit, type TransactionRecord } from './transactions.js';

/**
 * An operator's credit (`pinbot users add --balance`, `pinbot users grant`): recorded as a
 * `grant` transaction so that balances + pending always equal UBI + grants. Throws a plain
 * Error (an operator mistake, not an API error) for an amount outside 0.01 … MAX_GRANT.
 *
 * @example grantMoney(tx, env, user.id, 2500) // a grant of 25.00
 */
export function grantMoney(
  tx: Tx,
  env: DomainEnv,
  userId: string,
  cents: number,
  note = 'operator grant',
): TransactionRecord {
  if (!Number.isSafeInteger(cents) || cents <= 0 || cents > MAX_GRANT * CENTS) {
    throw new RangeError(`a grant is 0.01 to ${formatAmount(MAX_GRANT * CENTS)}, not ${cents / CENTS}`);
  }
  return recordCredit(tx, env, { type: 'grant', recipientId: userId, cents, note });
}
