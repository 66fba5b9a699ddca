import { isTransient } from '../../client/errors.js';
import { AbortedError } from '../../util/abort.js';
import type { RunnerContext } from './runner-deps.js';

/** Raised inside a run when the bot is stopping: the entry stays for the next start. */
export class Interrupted extends Error {}

/** What the retry loop needs: the runner (its deps and clock hold), what is retried and how. */
export interface RetryContext<T> {
  runner: RunnerContext;
  /** For the log line: `condition`, or the action's name. */
  what: string;
  fn: () => Promise<T>;
}

/**
 * The one retry loop of a run: retries `fn` on transient failures (network, 5xx, 429) with
 * doubling backoff until it works or the bot stops (then Interrupted). While it waits, the run
 * does not hold the clock. Other errors are thrown as they are.
 */
export async function retryTransient<T>({ runner, what, fn }: RetryContext<T>): Promise<T> {
  const d = runner.deps;
  const base = d.retryBaseMs ?? 1000;
  for (let attempt = 1; ; attempt++) {
    if (d.signal.aborted) throw new Interrupted();
    try {
      return await fn();
    } catch (err) {
      if (d.signal.aborted || err instanceof AbortedError) throw new Interrupted();
      if (!isTransient(err)) throw err;
      const wait = Math.min(d.retryCapMs ?? 60_000, base * 2 ** (attempt - 1));
      d.log.warn({ err: (err as Error).message, attempt, wait_ms: wait }, `${what} failed for now; retrying`);
      runner.busy(-1);
      try {
        await d.clock.sleep(wait, d.signal).catch(() => undefined);
      } finally {
        runner.busy(1);
      }
    }
  }
}
