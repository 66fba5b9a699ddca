import type { ErrorObject } from 'ajv';
import { regexProblem } from '../runtime/index.js';
import { ajvProblems, locate, type LocatedYaml } from '../util/yaml-errors.js';
import { shortPath } from './boundary.js';
import { PluginInstance, type Supervision } from './instance.js';
import { importFile, importPackage, pluginFiles, type Imported, type PluginOrigin } from './load.js';
import { checkShape, PLUGIN_NAME, semverLib, type CheckedPlugin } from './shape.js';

/** Something wrong with a plugin: where (file:line:col, or config.yaml:line:col), what, what to do. */
export interface PluginProblem {
  /** `plugins/bad.ts:7:2`, `npm pinbot-plugin-x`, `config.yaml:31:7`. */
  where: string;
  plugin?: string;
  message: string;
  hint?: string;
  /** Not fatal to the plugin (e.g. settings for a plugin that is not there). */
  warning?: boolean;
}

/** One line: `where: message — hint`. */
export function formatPluginProblem(p: PluginProblem): string {
  return `${p.where}: ${p.message}${p.hint ? ` — ${p.hint}` : ''}`;
}

export interface CollectOptions {
  /** The plugins folder (every plugin file in it), if any. */
  dir?: string;
  /** Plugin files given one by one. */
  files?: string[];
  /** Plugin objects given in code (the test kit). */
  definitions?: unknown[];
  /** npm packages, found from `projectDir` upwards. */
  packages?: string[];
  projectDir: string;
  /** This pinbot's version (checked against each plugin's `pinbot` range). */
  hostVersion: string;
  /** `plugins.config` of config.yaml, and the file it came from (for line:col). */
  configs: Record<string, unknown>;
  configYaml?: LocatedYaml;
  /** Names a plugin may not take (built-ins, event fields), with why. */
  reserved: ReadonlyMap<string, string>;
  supervision: Supervision;
}

/** What was loaded: the valid plugins, and every problem of the others. */
export interface Collected {
  instances: PluginInstance[];
  problems: PluginProblem[];
  /** Every plugin tried, valid or not (for `pinbot plugins list`). */
  tried: Array<{ name?: string; version?: string; origin: PluginOrigin; problem?: string }>;
}

const where = (o: PluginOrigin, line?: number, col?: number) =>
  `${o.file && o.kind === 'file' ? shortPath(o.file) : o.label}${line ? `:${line}${col ? `:${col}` : ''}` : ''}`;

/** ajv's message, or for `format: regex` what the linear-time engine cannot run and what to do. Internal. */
function formatMessage(e: ErrorObject): string | undefined {
  if (e.keyword !== 'format' || (e.params as { format?: string }).format !== 'regex') return e.message;
  const problem = regexProblem(String(e.data));
  return problem ? `${problem.message} — ${problem.hint}` : e.message;
}

/** The plugin's settings checked against its configSchema, defaults filled in. Internal. */
function configOf(
  p: CheckedPlugin,
  origin: PluginOrigin,
  o: CollectOptions,
): { config?: unknown; problems: PluginProblem[] } {
  const given = o.configs[p.name];
  const config = structuredClone(given ?? {});
  if (!p.configValidator || p.configValidator(config)) return { config, problems: [] };
  const base = ['plugins', 'config', p.name];
  const errors = (p.configValidator.errors ?? []).map((e) => ({
    ...e,
    instancePath: `/${base.join('/')}${e.instancePath}`,
    message: formatMessage(e),
  }));
  const about = `the settings of plugin ${p.name} (${where(origin)})`;
  if (o.configYaml) {
    return {
      problems: ajvProblems(o.configYaml, errors).map((fp) => ({
        where: `${shortPath(fp.file)}:${fp.line}:${fp.col}`,
        plugin: p.name,
        message: `${fp.path}: ${fp.message}`,
        hint: fp.hint ? `${fp.hint}; ${about}` : `fix ${about}`,
      })),
    };
  }
  return {
    problems: errors.map((e) => ({
      where: 'config',
      plugin: p.name,
      message: `${e.instancePath.slice(1).replace(/\//g, '.')}: ${e.message ?? 'is invalid'}`,
      hint: `fix ${about}`,
    })),
  };
}

/**
 * Loads plugins from files, packages and objects, and checks each: it imports (a syntax error
 * names file:line:col), exports a plugin of the right shape, accepts this pinbot version, has a
 * name no built-in or other plugin has, and its settings in config.yaml fit its configSchema. A
 * plugin with a problem is left out with a message saying what to do; the others load.
 */
export async function collectPlugins(o: CollectOptions): Promise<Collected> {
  const imported: Imported[] = [];
  for (const f of [...(o.dir ? pluginFiles(o.dir) : []), ...(o.files ?? [])]) imported.push(await importFile(f));
  for (const name of o.packages ?? []) imported.push(await importPackage(name, o.projectDir));
  (o.definitions ?? []).forEach((value, i) => {
    const name = (value as { name?: unknown } | null)?.name;
    imported.push({
      origin: { kind: 'inline', label: `plugin object ${typeof name === 'string' ? name : `#${i + 1}`}`, roots: [] },
      value,
    });
  });
  const out: Collected = { instances: [], problems: [], tried: [] };
  const taken = new Map<string, PluginOrigin>();
  for (const im of imported) {
    const fail = (message: string, hint?: string, at = where(im.origin), plugin?: string, version?: string) => {
      out.problems.push({ where: at, plugin, message, hint });
      out.tried.push({ name: plugin, version, origin: im.origin, problem: message });
    };
    if (im.problem) {
      fail(im.problem.message, im.problem.hint, where(im.origin, im.problem.line, im.problem.col));
      continue;
    }
    const { plugin: p, problems } = checkShape(im.value);
    if (!p) {
      // a plugin whose name is fine and only its entries are not is listed by that name, not `?`
      const named = declaredName(im.value);
      fail(
        `not a valid plugin: ${problems.join('; ')}`,
        'see docs/plugins.md for the shape definePlugin takes',
        undefined,
        named?.name,
        named?.version,
      );
      continue;
    }
    if (!semverLib().satisfies(o.hostVersion, p.range, { includePrerelease: true })) {
      fail(
        `${p.name} ${p.version} needs pinbot ${p.range}, and this is pinbot ${o.hostVersion}`,
        `use a version of ${p.name} made for pinbot ${o.hostVersion}, or a pinbot that ${p.range} accepts`,
        undefined,
        p.name,
        p.version,
      );
      continue;
    }
    const reserved = o.reserved.get(p.name);
    if (reserved) {
      fail(
        `the name ${p.name} is taken by ${reserved}`,
        'rename the plugin (its entries are named <plugin>.<entry>)',
        undefined,
        p.name,
        p.version,
      );
      continue;
    }
    const other = taken.get(p.name);
    if (other) {
      fail(
        `the name ${p.name} is already taken by the plugin of ${where(other)}`,
        'two plugins may not have the same name: rename one, or remove one',
        undefined,
        p.name,
        p.version,
      );
      continue;
    }
    taken.set(p.name, im.origin);
    const cfg = configOf(p, im.origin, o);
    if (cfg.problems.length) {
      out.problems.push(...cfg.problems);
      out.tried.push({
        name: p.name,
        version: p.version,
        origin: im.origin,
        problem: `invalid settings: ${cfg.problems.map((x) => x.message).join('; ')}`,
      });
      continue;
    }
    out.instances.push(new PluginInstance(p, im.origin, cfg.config, o.supervision));
    out.tried.push({ name: p.name, version: p.version, origin: im.origin });
  }
  for (const name of Object.keys(o.configs)) {
    if (out.tried.some((t) => t.name === name)) continue;
    const pos = o.configYaml ? locate(o.configYaml, ['plugins', 'config', name], true) : undefined;
    out.problems.push({
      where: o.configYaml && pos ? `${shortPath(o.configYaml.file)}:${pos.line}:${pos.col}` : 'config',
      message: `plugins.config.${name}: no plugin named ${name} is loaded`,
      hint: 'check the name, or remove these settings',
      warning: true,
    });
  }
  return out;
}

/** The name (and version) a plugin that failed its shape check declares, when the name is valid. Internal. */
function declaredName(value: unknown): { name: string; version?: string } | undefined {
  try {
    const v = value as { name?: unknown; version?: unknown } | null;
    if (!v || typeof v !== 'object' || typeof v.name !== 'string' || !PLUGIN_NAME.test(v.name)) return undefined;
    return { name: v.name, ...(typeof v.version === 'string' ? { version: v.version } : {}) };
  } catch {
    return undefined; // a getter that throws: the shape check said what is wrong
  }
}
