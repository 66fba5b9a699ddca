import { isTransient } from '../../client/errors.js';
import { AbortedError } from '../../util/abort.js';
import type { RunnerContext } from './runner-deps.js';

/** Raised inside a run when the bot is stopping: the entry stays for the next start. */
export class Interrupted extends Error {}

/** What the retry loop needs: the runner's limits, log and clock hold; what is retried, how. */
interface Retried<T> {
  runner: Pick<RunnerContext, 'limits' | 'writes' | 'busy'>;
  /** For the log line: `condition`, or the action's name. */
  what: string;
  fn: () => Promise<T>;
}

/**
 * The one retry loop of a run: retries `fn` on transient failures (network, 5xx, 429) with
 * doubling backoff until it works or the bot stops (then Interrupted). While it waits, the run
 * does not hold the clock. Other errors are thrown as they are.
 */
export async function retryTransient<T>({ runner, what, fn }: Retried<T>): Promise<T> {
  const { limits, writes } = runner;
  const base = limits.retryBaseMs ?? 1000;
  for (let attempt = 1; ; attempt++) {
    if (limits.signal.aborted) throw new Interrupted();
    try {
      return await fn();
    } catch (err) {
      if (limits.signal.aborted || err instanceof AbortedError) throw new Interrupted();
      if (!isTransient(err)) throw err;
      const wait = Math.min(limits.retryCapMs ?? 60_000, base * 2 ** (attempt - 1));
      writes.log.warn({ err: (err as Error).message, attempt, wait_ms: wait }, `${what} failed for now; retrying`);
      runner.busy(-1);
      try {
        await limits.clock.sleep(wait, limits.signal).catch(() => undefined);
      } finally {
        runner.busy(1);
      }
    }
  }
}
