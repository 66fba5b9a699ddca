import type { Store, Tx } from '../../store/core/types.js';
import { utcDate } from '../../clock/clock.js';
import type { DomainEnv } from '../env.js';
import { Users, type User } from '../users/users.js';
import { account, Accounts } from './accounts.js';
import { addDays, DAY_MS } from './dates.js';
import { exactCents } from './money.js';
import { recordCredit, Transactions, ubiKey } from './transactions.js';

/**
 * Universal basic income (API.md "UBI"): `ubi.amount_per_day` for every UTC day of a user's
 * life, paid at the start of that day (00:00 UTC) from their first full day on. Each credit is
 * keyed by (user, date) — the account remembers the last date paid and the store refuses a
 * second credit for the same key — so runs that are missed, repeated or concurrent never pay a
 * day twice or skip one: every run pays each user every date up to today not yet paid.
 */

/** How many users one store transaction credits (keeps journal lines small on large stores). */
const BATCH = 500;

/**
 * The first date a user created at `createdAt` is paid for: their first full UTC day (the day
 * of creation itself only when created exactly at 00:00).
 *
 * @example firstUbiDate(Date.parse('2026-11-21T12:00Z')) // '2026-11-22'
 */
export function firstUbiDate(createdAt: number): string {
  return utcDate(Math.ceil(createdAt / DAY_MS) * DAY_MS);
}

/** The daily credit in cents, or an Error naming the config key when it is not exact cents. */
export function ubiCents(env: DomainEnv): number {
  const cents = exactCents(env.config.ubi.amount_per_day);
  if (cents === undefined || cents < 0)
    throw new Error(
      `ubi.amount_per_day must be ≥ 0 with at most 2 decimal places, not ${env.config.ubi.amount_per_day}`,
    );
  return cents;
}

/**
 * Pays `user` every date from the day after their last credit (or their first full day)
 * through `through`, inside `tx`. Returns the number of credits made.
 *
 * @example creditUbiThrough(tx, env, user, '2026-11-24') // 3 for a user created 2026-11-21T12:00Z
 */
export function creditUbiThrough(tx: Tx, env: DomainEnv, user: User, through: string): number {
  const cents = ubiCents(env);
  const acc = account(tx, user.id);
  const first = firstUbiDate(user.created_at);
  let date = acc.ubi_through && acc.ubi_through >= first ? addDays(acc.ubi_through, 1) : first;
  if (date > through) return 0;
  let n = 0;
  for (; date <= through; date = addDays(date, 1)) {
    // A zero amount moves the mark without records: a transaction amount is always > 0.
    // A credit already stored for the date (a lost mark) is left alone, never paid again.
    if (cents === 0 || tx.col(Transactions).one('ubi', ubiKey(user.id, date))) continue;
    recordCredit(tx, env, { type: 'ubi', recipientId: user.id, cents, note: `UBI for ${date}`, ubiDate: date });
    n++;
  }
  tx.col(Accounts).update(user.id, { ubi_through: through });
  return n;
}

/**
 * One UBI run: credits every user through today (the clock's UTC date), in batches of
 * transactions. Safe to run at any time, any number of times, concurrently. Returns the
 * number of credits made.
 *
 * @example await runUbi(store, env) // 0 when everyone is paid up
 */
export async function runUbi(store: Store, env: DomainEnv): Promise<number> {
  ubiCents(env);
  const through = utcDate(env.clock.now());
  const ids = [...store.read.col(Users).all()].map((u) => u.id);
  let total = 0;
  for (let i = 0; i < ids.length; i += BATCH) {
    const batch = ids.slice(i, i + BATCH);
    total += await store.transaction((tx) => {
      let n = 0;
      for (const id of batch) {
        const user = tx.col(Users).get(id);
        if (user) n += creditUbiThrough(tx, env, user, through);
      }
      return n;
    });
  }
  return total;
}
