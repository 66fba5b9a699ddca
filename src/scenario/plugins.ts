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
export function registryFor(files: readonly string[], config: Record<string, unknown>): Promise<Registry> {
  // A frozen registry is shared by every scenario with the same plugins and config: the bot
  // validator compiled for it (the costly part of starting a bot) is then compiled once.
  const key = JSON.stringify([files, config]);
  let r = built.get(key);
  if (!r) {
    r = build(files, config);
    built.set(key, r);
    r.catch(() => built.delete(key));
  }
  return r;
}

const built = new Map<string, Promise<Registry>>();

async function build(files: readonly string[], config: Record<string, unknown>): Promise<Registry> {
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
