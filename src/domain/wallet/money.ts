import { DomainError } from '../errors.js';

/**
 * Money is integer cents everywhere inside pinbot; only the edges (JSON bodies, CLI arguments,
 * config values) see decimal amounts. No float arithmetic ever touches a balance: a decimal is
 * turned into cents once, here, and checked to be exact.
 */

/** Cents in one unit. */
export const CENTS = 100;

/** The largest amount an operator may grant in one command (units), so sums stay exact. */
export const MAX_GRANT = 1_000_000_000;

/**
 * The exact cents of a JSON number with at most 2 decimal places, or `undefined` when it has
 * more (or is not finite). A JSON decimal like `12.34` parses to the double nearest to it, and
 * so does `1234 / 100`, so the round trip is exact precisely for ≤ 2 decimals.
 *
 * @example exactCents(12.34) // 1234
 * @example exactCents(0.1 + 0.2) // undefined
 */
export function exactCents(value: number): number | undefined {
  if (!Number.isFinite(value)) return undefined;
  const cents = Math.round(value * CENTS);
  if (!Number.isSafeInteger(cents) || cents / CENTS !== value) return undefined;
  return cents === 0 ? 0 : cents; // never -0
}

/**
 * Validates a transfer amount from a request body (API.md "Money"): a number > 0 with at most
 * 2 decimals and at most `max` (units). Anything else is 400 `invalid_amount` naming `path`.
 *
 * @example parseAmount(5.25, 1_000_000) // 525
 */
export function parseAmount(value: unknown, max: number, path = 'body.amount'): number {
  const fail = (why: string): never => {
    throw new DomainError(
      'invalid_amount',
      `amount ${why}. Send a number like 5 or 12.50, greater than 0 and at most ${formatAmount(maxCents(max))}.`,
      [{ path, message: why }],
    );
  };
  if (typeof value !== 'number') return fail('must be a JSON number, not a string');
  if (!(value > 0)) return fail('must be greater than 0');
  const cents = exactCents(value);
  if (cents === undefined) return fail('has more than 2 decimal places');
  if (cents > maxCents(max)) return fail(`is more than the maximum transfer of ${formatAmount(maxCents(max))}`);
  return cents;
}

/** The cents of a configured maximum (config values may carry cents too). */
export function maxCents(max: number): number {
  // The epsilon keeps 0.29 * 100 = 28.999999999999996 at 29.
  return Math.floor(max * CENTS + 1e-6);
}

/**
 * Parses an amount typed by an operator (`--amount 12.50`): digits with at most 2 decimals,
 * turned into cents as text so no float is involved. Returns `undefined` for anything else.
 *
 * @example parseAmountText('12.5') // 1250
 */
export function parseAmountText(text: string): number | undefined {
  const m = /^\s*(\d{1,13})(?:\.(\d{1,2}))?\s*$/.exec(text);
  if (!m) return undefined;
  return Number(m[1]) * CENTS + Number((m[2] ?? '').padEnd(2, '0'));
}

/**
 * The JSON number of an amount in cents (what API responses carry).
 *
 * @example toAmount(1250) // 12.5
 */
export function toAmount(cents: number): number {
  return cents / CENTS;
}

/**
 * A human form with two decimals, for messages.
 *
 * @example formatAmount(1250) // '12.50'
 */
export function formatAmount(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / CENTS)}.${String(abs % CENTS).padStart(2, '0')}`;
}
