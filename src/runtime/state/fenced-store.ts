import type { Store, Tx } from '../../store/core/types.js';

/**
 * The store as one bot writes it when bots are shared out between processes: every
 * transaction first runs `fence` (which throws when the bot's lease is no longer this
 * process's), in the same transaction, so a process that lost a bot can never write its state
 * again. Reads and durability are the store's own; closing is left to the store's owner.
 */
export function fencedStore(store: Store, fence: (tx: Tx) => void): Store {
  return {
    get read() {
      return store.read;
    },
    health: store.health ? () => store.health!() : undefined,
    transaction: (fn) =>
      store.transaction((tx) => {
        fence(tx);
        return fn(tx);
      }),
    durable: () => store.durable(),
    close: async () => undefined,
  };
}
