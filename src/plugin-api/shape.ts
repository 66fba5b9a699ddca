import { createRequire } from 'node:module';
import type { Ajv, ValidateFunction } from 'ajv';
import { regexProblem } from '../runtime/index.js';
import { describeThrown } from './boundary.js';
import type { ActionSpec, ConditionSpec, Plugin, SourceSpec } from './types.js';

/** A plugin's name, and the names of its entries: the namespace before the dot. */
export const PLUGIN_NAME = /^[a-z][a-z0-9_]{0,39}$/;
const ENTRY_NAME = /^[a-z][a-z0-9_]{0,63}$/;
const KEYS = [
  'name',
  'version',
  'pinbot',
  'description',
  'configSchema',
  'actions',
  'conditions',
  'sources',
  'setup',
  'teardown',
];

const require = createRequire(import.meta.url);
let ajv: Ajv | undefined;
/**
 * One ajv for every plugin schema: defaults are filled in, types are not coerced. Made (and
 * ajv loaded) when the first plugin is checked: a CLI run without plugins never pays for it
 * (issue 33, `bots validate` start-up). Internal.
 */
export function pluginAjv(): Ajv {
  if (ajv) return ajv;
  const { Ajv } = require('ajv') as typeof import('ajv');
  ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false, verbose: true });
  // `format: regex` in a plugin's schema means a pattern the linear-time engine runs (what
  // `compileRegex` of pinbot/plugin takes): one with a backreference or lookaround is refused
  // when the settings load, at its config.yaml:line:col (see collect.ts), not when a message
  // comes (issue 21, item 4)
  ajv.addFormat('regex', { type: 'string', validate: (s: string) => regexProblem(s) === undefined });
  return ajv;
}

/** What collect.ts and this file use of semver (its types are not a dependency of the package). Internal. */
interface Semver {
  valid(v: string): string | null;
  validRange(range: string): string | null;
  satisfies(v: string, range: string, o?: { includePrerelease?: boolean }): boolean;
}

/** semver, loaded when a plugin is checked. Internal. */
export function semverLib(): Semver {
  return require('semver') as Semver;
}

/** A plugin whose shape was checked, with its schemas compiled. */
export interface CheckedPlugin {
  def: Plugin;
  name: string;
  version: string;
  range: string;
  description?: string;
  configValidator?: ValidateFunction;
  actions: Array<{ name: string; spec: ActionSpec<unknown, unknown>; validate: ValidateFunction }>;
  conditions: Array<{ name: string; spec: ConditionSpec<unknown, unknown>; validate: ValidateFunction }>;
  sources: Array<{ name: string; spec: SourceSpec<unknown> }>;
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const kind = (v: unknown) =>
  v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;

/**
 * Checks what a plugin module exported against definePlugin's shape — every problem, each
 * naming the key and what was expected — and compiles its schemas. Reading a hostile object
 * (a getter or proxy that throws) is a problem too, never a crash.
 */
export function checkShape(value: unknown): { plugin?: CheckedPlugin; problems: string[] } {
  try {
    return check(value);
  } catch (err) {
    return { problems: [`reading the plugin threw: ${describeThrown(err)}`] };
  }
}

function compile(schema: unknown, at: string, problems: string[]): ValidateFunction | undefined {
  if (!isObj(schema) && typeof schema !== 'boolean') {
    problems.push(
      `${at} must be a JSON Schema object, e.g. { type: 'object', properties: { … } }; found ${kind(schema)}`,
    );
    return undefined;
  }
  try {
    return pluginAjv().compile(schema);
  } catch (err) {
    problems.push(`${at} is not a valid JSON Schema: ${describeThrown(err)}`);
    return undefined;
  }
}

function entries(value: unknown, at: string, problems: string[]): Array<[string, Record<string, unknown>]> {
  if (value === undefined) return [];
  if (!isObj(value)) {
    problems.push(`${at} must be an object of entries by name; found ${kind(value)}`);
    return [];
  }
  const out: Array<[string, Record<string, unknown>]> = [];
  for (const [name, spec] of Object.entries(value)) {
    if (!ENTRY_NAME.test(name))
      problems.push(`${at}.${name}: a name is lower-case letters, digits and _, starting with a letter (e.g. give)`);
    else if (!isObj(spec)) problems.push(`${at}.${name} must be an object; found ${kind(spec)}`);
    else out.push([name, spec]);
  }
  return out;
}

function fn(spec: Record<string, unknown>, key: string, at: string, problems: string[], required = false): void {
  const v = spec[key];
  if (v === undefined ? required : typeof v !== 'function')
    problems.push(`${at}.${key} must be a function${v === undefined ? '' : `; found ${kind(v)}`}`);
}

function check(value: unknown): { plugin?: CheckedPlugin; problems: string[] } {
  if (!isObj(value))
    return {
      problems: [
        `the default export must be a plugin: export default definePlugin({ name, ` +
          `version, pinbot, … }); found ${kind(value)}`,
      ],
    };
  const problems: string[] = [];
  const v = value;
  for (const k of Object.keys(v))
    if (!KEYS.includes(k)) problems.push(`unknown key "${k}"; a plugin has ${KEYS.join(', ')}`);
  const name = v.name;
  if (typeof name !== 'string' || !PLUGIN_NAME.test(name))
    problems.push(
      `name must be lower-case letters, digits and _, starting with a letter (e.g. ` +
        `"karma"); found ${JSON.stringify(name) ?? 'nothing'}`,
    );
  const semver = semverLib();
  if (typeof v.version !== 'string' || !semver.valid(v.version))
    problems.push(`version must be a semver version like "1.0.0"; found ${JSON.stringify(v.version) ?? 'nothing'}`);
  if (typeof v.pinbot !== 'string' || !semver.validRange(v.pinbot))
    problems.push(
      `pinbot must be a semver range of the pinbot versions the plugin works with, ` +
        `like "^0.1.0"; found ${JSON.stringify(v.pinbot) ?? 'nothing'}`,
    );
  if (v.description !== undefined && typeof v.description !== 'string')
    problems.push(`description must be a string; found ${kind(v.description)}`);
  const configValidator = v.configSchema === undefined ? undefined : compile(v.configSchema, 'configSchema', problems);
  fn(v, 'setup', 'plugin', problems);
  fn(v, 'teardown', 'plugin', problems);
  const actions: CheckedPlugin['actions'] = [];
  for (const [n, spec] of entries(v.actions, 'actions', problems)) {
    const at = `actions.${n}`;
    fn(spec, 'run', at, problems, true);
    if (spec.effect !== undefined && spec.effect !== 'api' && spec.effect !== 'local')
      problems.push(`${at}.effect must be "api" or "local"; found ${JSON.stringify(spec.effect)}`);
    if (spec.templated !== undefined && typeof spec.templated !== 'boolean')
      problems.push(`${at}.templated must be true or false`);
    if (spec.description !== undefined && typeof spec.description !== 'string')
      problems.push(`${at}.description must be a string`);
    const validate = compile(spec.schema, `${at}.schema`, problems);
    if (validate) actions.push({ name: n, spec: spec as unknown as ActionSpec<unknown, unknown>, validate });
  }
  const conditions: CheckedPlugin['conditions'] = [];
  for (const [n, spec] of entries(v.conditions, 'conditions', problems)) {
    const at = `conditions.${n}`;
    fn(spec, 'test', at, problems, true);
    if (spec.description !== undefined && typeof spec.description !== 'string')
      problems.push(`${at}.description must be a string`);
    const validate = compile(spec.schema, `${at}.schema`, problems);
    if (validate) conditions.push({ name: n, spec: spec as unknown as ConditionSpec<unknown, unknown>, validate });
  }
  const sources: CheckedPlugin['sources'] = [];
  for (const [n, spec] of entries(v.sources, 'sources', problems)) {
    const at = `sources.${n}`;
    fn(spec, 'poll', at, problems);
    fn(spec, 'replyTo', at, problems);
    if (spec.example !== undefined && !isObj(spec.example))
      problems.push(`${at}.example must be an object (a sample event payload)`);
    if (spec.reads !== undefined && spec.reads !== 'outside' && spec.reads !== 'pinbot')
      problems.push(
        `${at}.reads must be "outside" (a file, a feed: polled at its cadence) or ` +
          `"pinbot" (only pinbot's data: polled when it changes) — found ` +
          `${JSON.stringify(spec.reads)}`,
      );
    if (spec.reads !== undefined && spec.poll === undefined)
      problems.push(`${at}.reads is for poll sources; this one has no poll()`);
    if (spec.description !== undefined && typeof spec.description !== 'string')
      problems.push(`${at}.description must be a string`);
    sources.push({ name: n, spec: spec as unknown as SourceSpec<unknown> });
  }
  if (problems.length) return { problems };
  return {
    plugin: {
      def: v as unknown as Plugin,
      name: name as string,
      version: v.version as string,
      range: v.pinbot as string,
      description: v.description as string | undefined,
      configValidator,
      actions,
      conditions,
      sources,
    },
    problems,
  };
}
