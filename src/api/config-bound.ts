import type { Config } from '../config/schema.js';

/**
 * A number in a route's JSON Schema that comes from config.yaml (`maxLength` of a message is
 * `messaging.max_length`). Route schemas are module constants; `bindConfig` puts the running
 * server's values in, for both the validator and the OpenAPI document, so the bound the
 * document states is the one the server enforces.
 */
export class FromConfig {
  constructor(
    /** The config key, for descriptions (`messaging.max_length`). */
    readonly key: string,
    readonly pick: (config: Config) => number,
  ) {}
}

/**
 * A schema number taken from config.
 *
 * @example content: { type: 'string', maxLength: fromConfig('messaging.max_length', (c) => c.messaging.max_length) }
 */
export function fromConfig(key: string, pick: (config: Config) => number): FromConfig {
  return new FromConfig(key, pick);
}

const found = new WeakMap<object, FromConfig[]>();
const bound = new WeakMap<object, Map<string, unknown>>();

/** Every FromConfig inside `value`, in walk order (cached per schema). Internal. */
function placeholders(value: unknown): FromConfig[] {
  if (!value || typeof value !== 'object') return [];
  const cached = found.get(value);
  if (cached) return cached;
  const out: FromConfig[] = [];
  const walk = (v: unknown): void => {
    if (v instanceof FromConfig) out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(value);
  found.set(value, out);
  return out;
}

/** A copy of `value` with each FromConfig replaced by its number. Internal. */
function resolve(value: unknown, config: Config): unknown {
  if (value instanceof FromConfig) return value.pick(config);
  if (Array.isArray(value)) return value.map((v) => resolve(v, config));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, config)]));
  return value;
}

/**
 * `schema` with the config's values in place of its FromConfig numbers: the same object when it
 * has none, and one object per distinct set of values (so ajv compiles each once).
 *
 * @example compileBody(bindConfig(route.schemas.body, env.config))
 */
export function bindConfig<T>(schema: T, config: Config): T {
  const ph = placeholders(schema);
  if (!ph.length) return schema;
  const key = ph.map((p) => p.pick(config)).join(',');
  let byKey = bound.get(schema as object);
  if (!byKey) bound.set(schema as object, (byKey = new Map()));
  if (!byKey.has(key)) byKey.set(key, resolve(schema, config));
  return byKey.get(key) as T;
}
