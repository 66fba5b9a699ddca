/** UTC calendar-date arithmetic on `YYYY-MM-DD` strings. Internal to the wallet. */

export const DAY_MS = 86_400_000;

/** Milliseconds of 00:00 UTC of a date. */
export function startOfDate(date: string): number {
  return Date.parse(`${date}T00:00:00Z`);
}

/**
 * The date `days` after `date`.
 *
 * @example addDays('2026-12-31', 1) // '2027-01-01'
 */
export function addDays(date: string, days: number): string {
  return new Date(startOfDate(date) + days * DAY_MS).toISOString().slice(0, 10);
}
