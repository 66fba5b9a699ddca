import type { Store } from './types.js';

/**
 * Wraps a store so `onCommit` is called after each transaction that committed (a virtual clock
 * uses it to know the world changed). Adds nothing else; reads go straight through.
 *
 * @example const store = withCommitSignal(fileStore, () => clock.touch());
 */
export function withCommitSignal(store: Store, onCommit: () => void): Store {
  return {
    get read() {
      return store.read;
    },
    async transaction(fn) {
      const out = await store.transaction(fn);
      onCommit();
      return out;
    },
    durable: () => store.durable(),
    health: () => store.health?.() ?? { writable: true },
    close: () => store.close(),
  };
}
