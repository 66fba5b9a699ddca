const settle = () => undefined;

/**
 * Runs functions one at a time, in the order they were given: each starts once the one before
 * it settled. A failure goes to its own caller only; the next one runs anyway. (The journal of
 * the file store, a host's reloads, a bot's deliveries.)
 *
 * @example const serial = new Serial(); await serial.run(() => write());
 */
export class Serial {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `fn` after everything given before it has settled. */
  run<T>(fn: () => Promise<T> | T): Promise<T> {
    const next = this.tail.then(fn);
    this.tail = next.then(settle, settle);
    return next;
  }

  /** Settles once everything given so far has settled. */
  idle(): Promise<void> {
    return this.tail.then(settle);
  }
}
