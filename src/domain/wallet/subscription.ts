import { defineCollection, type ReadView, type Tx } from '../../store/core/types.js';
import { utcDate } from '../../clock/clock.js';
import type { DomainEnv } from '../env.js';
import { addDays, DAY_MS, startOfDate } from './dates.js';

/** A user's subscription period, inclusive UTC dates. Its id is the user's id. */
export interface SubscriptionRecord {
  readonly id: string;
  readonly start_date: string;
  readonly end_date: string;
}

/** The most days one `subscribe` may add (a hundred years), so dates stay valid. */
export const MAX_SUBSCRIBE_DAYS = 36_500;

export const Subscriptions = defineCollection<SubscriptionRecord>({ name: 'wallet_subscriptions' });

/** The subscription object of the API (API.md "UBI, subscription, Shmita"). */
export interface SubscriptionView {
  is_subscribed: boolean;
  status: 'active' | 'expired' | 'none';
  start_date: string | null;
  end_date: string | null;
}

/**
 * A user's subscription as of `now`: `active` while today ≤ `end_date`, then `expired`;
 * `none` (dates null) for a user who never had one.
 *
 * @example subscriptionView(db, user.id, clock.now()) // { is_subscribed: true, status: 'active', … }
 */
export function subscriptionView(db: ReadView, userId: string, now: number): SubscriptionView {
  const s = db.col(Subscriptions).get(userId);
  if (!s) return { is_subscribed: false, status: 'none', start_date: null, end_date: null };
  const active = utcDate(now) <= s.end_date;
  return {
    is_subscribed: active,
    status: active ? 'active' : 'expired',
    start_date: s.start_date,
    end_date: s.end_date,
  };
}

/**
 * Days left until the end of `end_date` (its 24:00 UTC), to one decimal place, 0 when not
 * subscribed. Rounded up in tenths, so an active subscription never shows 0.
 *
 * @example subscriptionDays(db, user.id, Date.parse('2026-11-21T12:00Z')) // 30.5 for end 2026-12-21
 */
export function subscriptionDays(db: ReadView, userId: string, now: number): number {
  const s = db.col(Subscriptions).get(userId);
  if (!s || utcDate(now) > s.end_date) return 0;
  const left = startOfDate(s.end_date) + DAY_MS - now;
  return Math.ceil(left / (DAY_MS / 10)) / 10;
}

/**
 * Extends a subscription by `days` (the operator's `pinbot users subscribe`): from `end_date`
 * while active, else a new period from today. Returns the subscription as it now is.
 *
 * @example subscribe(tx, env, user.id, 30).end_date
 */
export function subscribe(tx: Tx, env: DomainEnv, userId: string, days: number): SubscriptionView {
  if (!Number.isInteger(days) || days < 1 || days > MAX_SUBSCRIBE_DAYS)
    throw new RangeError(
      `a subscription is extended by a whole number of days from 1 to ${MAX_SUBSCRIBE_DAYS}, not ${days}`,
    );
  const now = env.clock.now();
  const today = utcDate(now);
  const subs = tx.col(Subscriptions);
  const s = subs.get(userId);
  if (s && today <= s.end_date) subs.update(userId, { end_date: addDays(s.end_date, days) });
  else subs.put({ id: userId, start_date: today, end_date: addDays(today, days) });
  return subscriptionView(tx, userId, now);
}

/** Starts the trial of a new user: `subscription.trial_days` from today (none when 0). */
export function startTrial(tx: Tx, env: DomainEnv, userId: string): void {
  const days = env.config.subscription.trial_days;
  if (days <= 0) return;
  const today = utcDate(env.clock.now());
  tx.col(Subscriptions).put({ id: userId, start_date: today, end_date: addDays(today, days) });
}
