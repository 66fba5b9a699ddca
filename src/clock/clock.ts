import { AbortedError } from '../util/abort.js';

/** How a timer behaves on a virtual clock. */
export interface TimerOptions {
  /**
   * The timer only looks for changes made elsewhere (a bot's poll cadence). A virtual clock
   * fires it only once something changed since it was set (a commit, or another timer fired),
   * so advancing 30 days does not poll 500,000 times into a world that did not move.
   */
  heartbeat?: boolean;
  /**
   * The caller holds work (see `hold`) and this wait parks it: while it waits, that work does
   * not count as runnable, so a virtual clock can move on.
   */
  parked?: boolean;
}

/** Ends a piece of work begun with `hold`. Calling it twice is harmless. */
export type Release = () => void;

/**
 * The one source of time, and the owner of every timer. Code asks the clock for the time and
 * for timers, never `Date.now()` or `setTimeout`, so a virtual clock drives all of it: cron
 * jobs, bot poll cadence and backoff, `wait` steps, rate-limit windows, plugin schedules.
 *
 * @example
 * const cancel = clock.setTimer(clock.now() + 60_000, () => log.info('a minute later'));
 * await clock.sleep(5_000, signal);
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** True when time moves only when told (serve --virtual-clock, scenarios, the test kit). */
  readonly virtual: boolean;
  /** Calls `fn` once the clock reaches `at` (ms). Returns a function that cancels it. */
  setTimer(at: number, fn: () => void, opts?: TimerOptions): () => void;
  /** Resolves once the clock reaches `at`; rejects with AbortedError when `signal` aborts. */
  sleepUntil(at: number, signal?: AbortSignal, opts?: TimerOptions): Promise<void>;
  /** `sleepUntil(now() + ms)`. */
  sleep(ms: number, signal?: AbortSignal, opts?: TimerOptions): Promise<void>;
  /**
   * Marks work in progress (a bot run, a poll, a job) until the returned function is called. A
   * virtual clock's `advance` returns only when no work is held: the step after it sees every
   * effect. A no-op on the real clock.
   */
  hold(label: string): Release;
  /** Tells a virtual clock the world changed (a commit): heartbeat timers may fire again. */
  touch(): void;
}

/** setTimeout's largest delay is about 24.8 days: longer timers go in steps. Internal. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const noop = () => undefined;

/** Waits on a clock's timer with an AbortSignal. Internal (shared by both clocks). */
export function sleepOn(
  clock: Clock,
  at: number,
  signal: AbortSignal | undefined,
  opts: TimerOptions | undefined,
): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError());
    const onAbort = () => {
      cancel();
      reject(new AbortedError());
    };
    const cancel = clock.setTimer(
      at,
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      opts,
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Wall-clock time, with real timers. */
class SystemClock implements Clock {
  readonly virtual = false;
  now(): number {
    return Date.now();
  }
  setTimer(at: number, fn: () => void): () => void {
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      const left = at - Date.now();
      if (left > MAX_TIMER_MS) timer = setTimeout(arm, MAX_TIMER_MS);
      else timer = setTimeout(fn, Math.max(0, left));
    };
    arm();
    return () => clearTimeout(timer);
  }
  sleepUntil(at: number, signal?: AbortSignal, opts?: TimerOptions): Promise<void> {
    return sleepOn(this, at, signal, opts);
  }
  sleep(ms: number, signal?: AbortSignal, opts?: TimerOptions): Promise<void> {
    return sleepOn(this, Date.now() + ms, signal, opts);
  }
  hold(): Release {
    return noop;
  }
  touch(): void {}
}

/** Wall-clock time. */
export const systemClock: Clock = new SystemClock();

/** `YYYY-MM-DD` (UTC) of a timestamp. */
export function utcDate(ms: number): string {
  // Asked several times per request (a balance: subscription, Shmita) and the answer changes
  // once a day: the last day's answer is kept. NaN never equals itself, so a bad time still throws.
  // (a time between whole milliseconds is not kept: Date truncates it towards zero, not down)
  if (!Number.isInteger(ms)) return new Date(ms).toISOString().slice(0, 10);
  const day = Math.floor(ms / 86_400_000);
  if (day !== lastUtcDay) {
    lastUtcDate = new Date(ms).toISOString().slice(0, 10);
    lastUtcDay = day;
  }
  return lastUtcDate;
}

/** The last day utcDate was asked about, and its answer. Internal. */
let lastUtcDay = NaN;
let lastUtcDate = '';

/**
 * ISO 8601 UTC string of a timestamp, as `Date.prototype.toISOString` writes it.
 *
 * Every message, transaction and list item a read returns carries one (`created_at`), ten to
 * two hundred per poll: the date part is kept per day and the time written from the
 * milliseconds, about a tenth of the cost of a Date per call. Times that are not whole
 * milliseconds or are out of a Date's range go through Date (which also throws for NaN).
 *
 * @example iso(1795291200000) // '2026-11-21T12:00:00.000Z'
 */
export function iso(ms: number): string {
  if (!Number.isInteger(ms) || ms > MAX_TIME || ms < -MAX_TIME) return new Date(ms).toISOString();
  const day = Math.floor(ms / 86_400_000);
  if (day !== isoDay) {
    isoPrefix = new Date(day * 86_400_000).toISOString().slice(0, -13); // up to and with the 'T'
    isoDay = day;
  }
  let t = ms - day * 86_400_000;
  const milli = t % 1000;
  t = (t - milli) / 1000;
  const sec = t % 60;
  t = (t - sec) / 60;
  const min = t % 60;
  const hour = (t - min) / 60;
  return `${isoPrefix}${hour < 10 ? '0' : ''}${hour}:${
    min < 10 ? '0' : ''
  }${min}:${sec < 10 ? '0' : ''}${sec}.${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}

/** The largest time a Date holds (ms from the epoch, either way). Internal. */
const MAX_TIME = 8.64e15;
/** The last day iso wrote, and its date part (`2026-11-21T`). Internal. */
let isoDay = NaN;
let isoPrefix = '';
