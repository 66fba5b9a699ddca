/**
 * The API key (its id) a request's write is made with: the embedded server tells the bots a
 * change concerns which key made it, so a bot is not woken by its own replies. The store reads
 * the cause when a transaction begins, synchronously (store/core/commit-signal.ts), so the API
 * sets it around that call only.
 *
 * Why not an AsyncLocalStorage: on Node 20, one that has run turns on async hooks for every
 * promise and resource of the process from then on, a cost every request paid (bench/read).
 *
 * @example
 * const done = requestKey.with('key_01h…', () => store.transaction(fn));
 * requestKey.current() // undefined outside that call
 */
export const requestKey = {
  /** Runs `fn` (which begins a store transaction) as made with key `keyId`. */
  with<T>(keyId: string | undefined, fn: () => T): T {
    const before = current;
    current = keyId;
    try {
      return fn();
    } finally {
      current = before;
    }
  },
  /** The key of the transaction beginning now, if a request's. */
  current(): string | undefined {
    return current;
  },
};

let current: string | undefined;
