import type { ReadView } from '../../store/core/types.js';
import { utcDate } from '../../clock/clock.js';
import type { DomainEnv } from '../env.js';
import { balanceCents } from './accounts.js';
import { toAmount } from './money.js';
import { nextShmita } from './shmita.js';
import { subscriptionDays, subscriptionView } from './subscription.js';

/** `GET /wallet/balance` (spec §4). */
export interface BalanceView {
  balance: number;
  subscription_days: number;
  is_subscribed: boolean;
  next_shmita: string;
}

/**
 * The caller's balance with their subscription and the next Shmita, as of the clock's now.
 *
 * @example walletBalance(db, env, user.id) // { balance: 12.5, subscription_days: 30.5,
 * is_subscribed: true, next_shmita: '2029-09-09' }
 */
export function walletBalance(db: ReadView, env: DomainEnv, userId: string): BalanceView {
  const now = env.clock.now();
  return {
    balance: toAmount(balanceCents(db, userId)),
    subscription_days: subscriptionDays(db, userId, now),
    is_subscribed: subscriptionView(db, userId, now).is_subscribed,
    next_shmita: nextShmita(utcDate(now)),
  };
}
