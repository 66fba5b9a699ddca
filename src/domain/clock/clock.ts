/** The one source of time. Every time-dependent rule takes a Clock, never `Date.now()`. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** True when time moves only when told (serve --virtual-clock). */
  readonly virtual: boolean;
}

/** Wall-clock time. */
export const systemClock: Clock = { now: () => Date.now(), virtual: false };

/**
 * A clock that moves only when told. Used by `serve --virtual-clock`, scenarios and tests.
 *
 * @example
 * const clock = new VirtualClock(Date.parse('2026-01-01T00:00:00Z'));
 * clock.set(clock.now() + 86_400_000);
 */
export class VirtualClock implements Clock {
  readonly virtual = true;
  constructor(private ms: number = Date.now()) {}
  now(): number {
    return this.ms;
  }
  set(ms: number): void {
    this.ms = ms;
  }
}

/** `YYYY-MM-DD` (UTC) of a timestamp. */
export function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** ISO 8601 UTC string of a timestamp. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
