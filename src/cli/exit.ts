import { setTimeout as sleep } from 'node:timers/promises';
import { logDestination, type Logger } from '../log.js';

/**
 * Exits with `code` once the log lines are written out — or after `ms` at most, whatever
 * stdout's reader does. pino's exit handler flushes stdout synchronously and retries a failing
 * write for ever (EAGAIN from a reader that stalled, EPIPE from one that died), so a stop could
 * hang after the snapshot was written. When the log has not drained in time, the process exits
 * without running exit handlers: the store is closed by then, only log lines are lost.
 *
 * @example server.close().then(() => exitAfterLog(log, 0));
 */
export async function exitAfterLog(log: Logger, code: number, ms = 2000): Promise<never> {
  const out = logDestination(log);
  const drained = () => !out || out.pending === 0;
  log.flush();
  // Real time: the exit of a process, whatever clock its server ran on.
  for (const deadline = Date.now() + ms; !drained() && Date.now() < deadline; ) await sleep(10);
  if (!drained()) {
    const reallyExit = (process as unknown as { reallyExit?: (code: number) => never }).reallyExit;
    if (typeof reallyExit === 'function') reallyExit.call(process, code);
  }
  process.exit(code);
}
