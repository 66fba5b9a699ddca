import type { Config } from '../config/schema.js';

/**
 * Whether several processes share the store (`store.driver: postgres`): then the CLI talks to
 * the database itself instead of a data directory's server. Its own module, with no imports
 * beyond the config's type, so the CLI can ask before it loads any store.
 */
export const storeIsShared = (config: Config): boolean => config.store.driver === 'postgres';
