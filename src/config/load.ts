import { existsSync, readFileSync } from 'node:fs';
import {
  ajvProblems,
  formatProblem,
  locate,
  locateText,
  parseYaml,
  type FileProblem,
  type LocatedYaml,
} from '../util/yaml-errors.js';
import { interpolateEnv } from './env-refs.js';
import { configSchema, type Config } from './schema.js';
import { validate as validateCron } from 'node-cron';
import { parseDuration } from '../util/duration.js';
import { OperatorError } from '../util/operator-error.js';
import { newAjv, validatorFor } from '../util/prebuilt-validator.js';

/** Thrown when config.yaml cannot be used; `problems` carry file:line:col. */
export class ConfigError extends OperatorError {
  constructor(readonly problems: FileProblem[]) {
    super(problems.map(formatProblem).join('\n'));
    this.name = 'ConfigError';
  }
}

// Generated at build time (util/prebuilt-validator.ts), else compiled now; no check of this (our
// own, tested) schema against the JSON Schema meta-schema — it costs more than it saves.
const validateConfig = validatorFor('config', JSON.stringify(configSchema));

/** Rules between keys that a JSON Schema cannot state: `[path, message, hint]`. Internal. */
function crossChecks(config: Config): Array<[string[], string, string]> {
  const out: Array<[string[], string, string]> = [];
  const s = config.server;
  if (parseDuration(s.headers_timeout)! > parseDuration(s.request_timeout)!) {
    out.push([
      ['server', 'headers_timeout'],
      `is longer than server.request_timeout (${s.request_timeout})`,
      'the headers are part of the request: make it at most request_timeout',
    ]);
  }
  if (config.store.driver === 'postgres' && !config.store.url) {
    out.push([
      ['store', 'driver'],
      'is postgres but store.url is not set',
      'add store.url: ${env:DATABASE_URL} (a postgres:// URL), or use driver: file',
    ]);
  }
  return out;
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
    throw new Error(`invalid config: ${newAjv('config').errorsText(validateConfig.errors)}`);
  }
  const [problem] = crossChecks(copy as unknown as Config);
  if (problem) throw new Error(`invalid config: ${problem[0].join('.')} ${problem[1]}`);
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
  const data = interpolateEnv(value ?? {}, env, {
    onMissing: (path, name, ref) => {
      const pos = locateText(located, path, ref);
      missing.push({
        file,
        ...pos,
        path: path.join('.'),
        message: `environment variable ${name} is not set`,
        hint: `export ${name}=… or remove the reference`,
      });
    },
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
    throw new ConfigError([
      {
        file,
        ...pos,
        path: 'ubi.schedule',
        message: 'expected a cron expression',
        hint: 'e.g. "0 0 * * *" (midnight UTC)',
      },
    ]);
  }
  const crossed = crossChecks(config);
  if (crossed.length)
    throw new ConfigError(
      crossed.map(([path, message, hint]) => ({ file, ...locate(located, path), path: path.join('.'), message, hint })),
    );
  return config;
}
