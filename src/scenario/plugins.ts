import { pino } from 'pino';
import { configFrom } from '../config/load.js';
import type { Registry } from '../runtime/registry.js';
import { buildRegistry } from '../services/registry.js';

/**
 * The one seam where a scenario's `plugins:` become a registry: bots of the scenario are
 * validated and run with what this returns. Today it builds the registry with
 * `buildRegistry` (built-ins and the project's plugins); plugin files named by a scenario
 * are refused with a clear message until the plugin host loads them here.
 *
 * @example const registry = await registryFor([], scenario.config);
 */
export async function registryFor(files: readonly string[], config: Record<string, unknown>): Promise<Registry> {
  if (files.length) {
    throw new Error(`plugins: loading plugin files in a scenario is not available in this version of pinbot (${files.length} file${files.length > 1 ? 's' : ''} named); remove plugins: or run a version with the plugin host`);
  }
  let cfg;
  try {
    cfg = configFrom(config);
  } catch {
    cfg = configFrom({}); // config problems are reported on their own, with positions
  }
  return buildRegistry({ config: cfg, log: pino({ level: 'silent' }) });
}
