import type { Store } from '../store/types.js';

/** Who an embedded bot is: its user and a key to act as them. */
export interface EmbeddedKey {
  apiKey: string;
  user: { display_name: string; pin_code: string };
  /** True when a new key (or user) was made for this call. */
  created: boolean;
}

/**
 * Gives embedded bots (`as:` a user of this server) their API key. The runtime does not make
 * users or keys itself: `serve` gives the host a provider that does (services/), so the runtime
 * reaches the server only through the client. Throws IdentityPending while the user is missing.
 */
export interface IdentityProvider {
  keyFor(req: { bot: string; as: string; createUser: boolean }): Promise<EmbeddedKey>;
}

/**
 * Opens the store a bot's state (cursors, inbox, vars) lives in: the server's own store for
 * embedded bots, a store of its own for bots of a remote server.
 */
export interface StateStores {
  open(kind: 'embedded' | 'remote'): Promise<Store>;
  close(): Promise<void>;
}
