import { HDate, months } from '@hebcal/core';
import { DAY_MS } from './dates.js';

/** Rata Die day number of 1970-01-01 (R.D. 1 is 0001-01-01 Gregorian), as @hebcal counts. */
const RD_UNIX_EPOCH = 719_163;

/** A UTC `YYYY-MM-DD` as a Hebrew date, independent of the process time zone. Internal. */
function hebrewOf(date: string): HDate {
  return new HDate(Math.floor(Date.parse(`${date}T00:00:00Z`) / DAY_MS) + RD_UNIX_EPOCH);
}

/** A Hebrew date as a UTC `YYYY-MM-DD`. Internal. */
function gregorianOf(hd: HDate): string {
  return new Date((hd.abs() - RD_UNIX_EPOCH) * DAY_MS).toISOString().slice(0, 10);
}

/**
 * The last day (29 Elul) of the next Shmita year — the Hebrew year divisible by 7 — on or
 * after `date`; during a Shmita year, the end of the current one. From the Hebrew calendar of
 * @hebcal/core, not a table.
 *
 * @example nextShmita('2026-11-21') // '2029-09-09' (29 Elul 5789)
 * @example nextShmita('2029-09-10') // '2036-09-21' (29 Elul 5796)
 */
export function nextShmita(date: string): string {
  // The answer changes at most once a day, and every balance read asks: keep the last one.
  if (date === last.date) return last.value;
  const year = hebrewOf(date).getFullYear();
  const shmitaYear = Math.ceil(year / 7) * 7;
  const value = gregorianOf(new HDate(29, months.ELUL, shmitaYear));
  last = { date, value };
  return value;
}

/** The last question and answer of nextShmita. Internal. */
let last = { date: '', value: '' };
