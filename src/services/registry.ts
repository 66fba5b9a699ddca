import { resolve } from 'node:path';
import type { Logger } from 'pino';
import { configSource } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { collectPlugins } from '../plugin-api/collect.js';
import { PluginHost } from '../plugin-api/host.js';
import { MAX_BODY_BYTES } from '../plugin-api/routes.js';
import { STATE_MAX_KEYS, STATE_MAX_TOTAL_BYTES } from '../plugin-api/state.js';
import { PINBOT_VERSION } from '../plugin-api/version.js';
import { createRegistry, knownFields, type Registry } from '../runtime/index.js';
import { parseDuration } from '../util/duration.js';

export interface BuildRegistryOptions {
  config: Config;
  log: Logger;
  /** No plugins at all (`pinbot serve --safe`). */
  safe?: boolean;
  /** Load the plugins of `config.plugins.dir` (default true; a path loads that folder instead). */
  pluginsDir?: boolean | string;
  /** Plugins besides the configured ones: files, or plugin objects (the test kit). */
  plugins?: ReadonlyArray<string | object>;
  /** Where `plugins.dir` and `plugins.packages` are found from (default: the working directory). */
  projectDir?: string;
  /** The pinbot version plugins are checked against (tests). */
  hostVersion?: string;
}

/**
 * A project's registry: the built-ins and its plugins' entries, and the plugins themselves
 * (`plugins`: started by the plugins service, listed by `pinbot plugins list`). A registry made
 * otherwise (`createRegistry()`) has no plugins.
 */
export type ProjectRegistry = Registry & { readonly plugins?: PluginHost };

/** Words templates and conditions already give a meaning to. Internal. */
const SCOPE_WORDS = [
  'event',
  'bot',
  'me',
  'vars',
  'steps',
  'now',
  'wallet',
  'type',
  'event_id',
  'plugins',
  'pinbot',
  'config',
];

/** Names a plugin may not take: built-in entries and their first words, event fields. Internal. */
function reservedNames(registry: Registry): Map<string, string> {
  const out = new Map<string, string>();
  for (const w of SCOPE_WORDS) out.set(w, `a word of templates and conditions (${w})`);
  for (const t of registry.triggers.values())
    for (const f of knownFields(t.example))
      out.set(f.split('.')[0]!, `the field ${f.split('.')[0]} of ${t.name} events (conditions name fields)`);
  for (const [kind, map] of [
    ['trigger', registry.triggers],
    ['condition', registry.conditions],
    ['action', registry.actions],
    ['source', registry.sources],
  ] as const) {
    for (const name of map.keys()) out.set(name.split('.')[0]!, `the built-in ${kind} ${name}`);
  }
  return out;
}

/**
 * The one registry builder: every entry point (`serve`, `bots validate`, `bots run`, the
 * schema writer, scenarios, the test kit) gets its triggers, conditions, actions and sources
 * from here, so whatever a plugin registers is known to all of them. Plugins come from
 * `plugins.dir`, `plugins.packages` and `plugins` (given in code); one that cannot load is
 * logged with what to do and left out — the others load, and bots naming it are told why. The
 * registry is frozen once built; its `plugins` are the plugins loaded.
 *
 * @example const registry = await buildRegistry({ config, log });
 */
export async function buildRegistry(o: BuildRegistryOptions): Promise<ProjectRegistry> {
  const registry = createRegistry();
  if (o.safe) {
    o.log.warn(
      'safe mode: no plugins are loaded (bots that use plugin entries are invalid until pinbot starts without --safe)',
    );
    return registry.markPluginsOff('safe mode (serve --safe) loads no plugins: start pinbot without --safe').freeze();
  }
  const projectDir = resolve(o.projectDir ?? '.');
  const dir =
    o.pluginsDir === false
      ? undefined
      : resolve(projectDir, typeof o.pluginsDir === 'string' ? o.pluginsDir : o.config.plugins.dir);
  const given = o.plugins ?? [];
  const collected = await collectPlugins({
    dir,
    files: given.filter((p): p is string => typeof p === 'string').map((f) => resolve(projectDir, f)),
    definitions: given.filter((p) => typeof p !== 'string'),
    packages: o.config.plugins.packages,
    projectDir,
    hostVersion: o.hostVersion ?? PINBOT_VERSION,
    configs: o.config.plugins.config ?? {},
    configYaml: configSource(o.config),
    reserved: reservedNames(registry),
    supervision: {
      timeoutMs: parseDuration(o.config.runtime.step_timeout) ?? 10_000,
      quarantineAfter: o.config.plugins.quarantine_after ?? 5,
      maxBodyBytes: o.config.plugins.max_body_bytes ?? MAX_BODY_BYTES,
      state: {
        maxKeys: o.config.plugins.state?.max_keys ?? STATE_MAX_KEYS,
        maxBytes: o.config.plugins.state?.max_bytes ?? STATE_MAX_TOTAL_BYTES,
      },
      log: o.log,
    },
  });
  const host = new PluginHost(collected);
  host.register(registry);
  for (const p of collected.problems)
    o.log[p.warning ? 'warn' : 'error'](`plugin problem: ${p.where}: ${p.message}${p.hint ? ` — ${p.hint}` : ''}`);
  if (collected.instances.length)
    o.log.debug(
      `plugins: ${collected.instances
        .map((i) => `${i.name} ${i.checked.version}`)
        .join(', ')} loaded${collected.problems.some((p) => !p.warning) ? '; some did not load (see above)' : ''}`,
    );
  return Object.assign(registry.freeze(), { plugins: host });
}
