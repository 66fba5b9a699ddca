import { AbortedError, sleep } from '../client/sleep.js';
import type { Clock } from '../clock/clock.js';

/** How often a wait on a virtual clock looks at the time (real ms). */
const VIRTUAL_TICK_MS = 20;
/** setTimeout's largest delay is about 24.8 days: longer waits go in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Waits until `clock.now() >= until`. On the real clock that is a timer; on a virtual clock
 * time moves only when told (`pinbot clock advance`), so the wait looks at it every few ms.
 * Rejects with AbortedError when `signal` aborts.
 *
 * @example await sleepUntil(clock, clock.now() + 60_000, signal);
 */
export async function sleepUntil(clock: Clock, until: number, signal?: AbortSignal): Promise<void> {
  for (;;) {
    if (signal?.aborted) throw new AbortedError();
    const left = until - clock.now();
    if (left <= 0) return;
    await sleep(clock.virtual ? VIRTUAL_TICK_MS : Math.min(left, MAX_TIMER_MS), signal);
  }
}
