import { existsSync, readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { parse as parseScalar } from 'yaml';
import { ajvProblems, formatProblem, locate, parseYaml, type FileProblem, type LocatedYaml } from '../util/yaml-errors.js';
import { configSchema, type Config } from './schema.js';
import { validate as validateCron } from 'node-cron';

/** Thrown when config.yaml cannot be used; `problems` carry file:line:col. */
export class ConfigError extends Error {
  constructor(readonly problems: FileProblem[]) {
    super(problems.map(formatProblem).join('\n'));
    this.name = 'ConfigError';
  }
}

const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false, verbose: true });
const validateConfig = ajv.compile(configSchema);

const ENV_REF = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Replaces `${env:VAR}` in every string of `value`. A string that is exactly one reference takes
 * the variable's YAML scalar type (`"${env:PORT}"` with PORT=8080 becomes the number 8080).
 * Unset variables are reported by path. Internal, shared with bot files.
 */
export function interpolateEnv(
  value: unknown,
  env: NodeJS.ProcessEnv,
  onMissing: (path: Array<string | number>, name: string) => void,
  path: Array<string | number> = [],
): unknown {
  if (typeof value === 'string') {
    const whole = /^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(value);
    if (whole) {
      const v = env[whole[1]!];
      if (v === undefined) {
        onMissing(path, whole[1]!);
        return value;
      }
      try {
        const typed = parseScalar(v);
        return typeof typed === 'object' && typed !== null ? v : typed;
      } catch {
        return v;
      }
    }
    return value.replace(ENV_REF, (ref, name: string) => {
      const v = env[name];
      if (v === undefined) {
        onMissing(path, name);
        return ref;
      }
      return v;
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolateEnv(v, env, onMissing, [...path, i]));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = interpolateEnv(v, env, onMissing, [...path, k]);
    return out;
  }
  return value;
}

const sources = new WeakMap<Config, LocatedYaml>();

/**
 * Where a loaded config came from: its YAML with positions, so a later check (a plugin's
 * `configSchema`) can report `config.yaml:line:col`. Undefined for configs built from data.
 */
export function configSource(config: Config): LocatedYaml | undefined {
  return sources.get(config);
}

/** Validates already-parsed config data (e.g. from tests) and fills defaults. */
export function configFrom(data: unknown = {}): Config {
  const copy = structuredClone(data ?? {}) as Record<string, unknown>;
  if (!validateConfig(copy)) {
    throw new Error(`invalid config: ${ajv.errorsText(validateConfig.errors)}`);
  }
  return copy as unknown as Config;
}

/**
 * Loads `file` (a missing file means all defaults): YAML → `${env:VAR}` → schema with
 * defaults. Any problem throws a ConfigError naming file:line:col and the expected type.
 */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Config {
  if (!existsSync(file)) return configFrom({});
  const { located, value, problems } = parseYaml(file, readFileSync(file, 'utf8'));
  if (problems.length) throw new ConfigError(problems);
  const missing: FileProblem[] = [];
  const data = interpolateEnv(value ?? {}, env, (path, name) => {
    const pos = locate(located, path);
    missing.push({ file, ...pos, path: path.join('.'), message: `environment variable ${name} is not set`, hint: `export ${name}=… or remove the reference` });
  });
  if (missing.length) throw new ConfigError(missing);
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new ConfigError([{ file, line: 1, col: 1, path: '', message: 'expected a mapping of config keys' }]);
  }
  if (!validateConfig(data)) throw new ConfigError(ajvProblems(located, validateConfig.errors));
  const config = data as unknown as Config;
  sources.set(config, located);
  if (!validateCron(config.ubi.schedule)) {
    const pos = locate(located, ['ubi', 'schedule']);
    throw new ConfigError([{ file, ...pos, path: 'ubi.schedule', message: 'expected a cron expression', hint: 'e.g. "0 0 * * *" (midnight UTC)' }]);
  }
  return config;
}
