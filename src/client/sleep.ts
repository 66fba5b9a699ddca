import { AbortedError } from '../util/abort.js';

export { AbortedError } from '../util/abort.js';

/**
 * Waits `ms` real milliseconds; rejects with AbortedError when `signal` aborts first. The
 * client's default; bots get their clock's sleep instead.
 *
 * @example await sleep(500, controller.signal);
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError());
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbortedError());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export type SleepFn = (ms: number, signal?: AbortSignal) => Promise<void>;
