import { pino } from 'pino';
import { configFrom } from '../config/load.js';
import type { Registry } from '../runtime/index.js';
import { formatPluginProblem } from '../plugin-api/collect.js';
import { buildRegistry } from '../services/registry.js';

/**
 * The one seam where a scenario's `plugins:` become a registry: bots of the scenario are
 * validated and run with what this returns — the built-ins and the plugin files the scenario
 * names (as the test kit, a scenario loads only the plugins it lists). A plugin that does not
 * load is a problem of the scenario, with the plugin's message.
 *
 * @example const registry = await registryFor([], scenario.config);
 */
export function registryFor(files: readonly string[], config: Record<string, unknown>): Promise<Registry> {
  // plugins are set up per world (their jobs, routes, listeners): a registry with plugins is never shared
  if (files.length) return build(files, config);
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
  let cfg;
  try {
    cfg = configFrom(config);
  } catch {
    cfg = configFrom({}); // config problems are reported on their own, with positions
  }
  const registry = await buildRegistry({
    config: cfg,
    log: pino({ level: 'silent' }),
    pluginsDir: false,
    plugins: [...files],
  });
  const failed = registry.plugins?.problems.filter((p) => !p.warning) ?? [];
  if (failed.length) throw new Error(`a plugin did not load: ${failed.map(formatPluginProblem).join('; ')}`);
  return registry;
}
