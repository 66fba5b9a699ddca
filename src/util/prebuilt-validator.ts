import { hash } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Ajv, Options, ValidateFunction } from 'ajv';

const require = createRequire(import.meta.url);

/** Where the package's generated validators are: dist/validators/ beside dist/util/. Internal. */
const PREBUILT = new URL('../validators/', import.meta.url);

/** What `new Ajv(…)` the compiled package and the runtime share for a schema. */
export const VALIDATOR_OPTIONS = {
  /** The bot files' schema (runtime/define/loader.ts). */
  bot: { allErrors: true, strict: false, verbose: true, validateSchema: false },
  /** config.yaml's schema (config/load.ts): fills defaults in. */
  config: { allErrors: true, useDefaults: true, strict: false, verbose: true, validateSchema: false },
} satisfies Record<string, Options>;

/** The schemas with a validator generated at build time. */
export type SchemaName = keyof typeof VALIDATOR_OPTIONS;

/** The SHA-256 of a schema's JSON text: which schema a prebuilt validator was generated from. */
export function schemaHash(text: string): string {
  return hash('sha256', text, 'hex');
}

/**
 * A validator for `schemaText` (a schema as JSON), without compiling it at start when the
 * package has one generated for exactly this text: `npm run build` writes ajv's standalone code
 * of the built-in schemas to `dist/validators/NAME.cjs` (scripts/build-validators.js), which
 * loads in a fraction of a compile (issue 33: `bots validate` ≤ 5× `node -e 0`). Otherwise —
 * run from src/, or plugins added entries to the bot schema — ajv compiles it now, with the same
 * options, so both give the same answers and errors.
 */
export function validatorFor(name: SchemaName, schemaText: string, dir: URL = PREBUILT): ValidateFunction {
  const prebuilt = loadPrebuilt(new URL(`${name}.cjs`, dir));
  if (prebuilt && prebuilt.schemaHash === schemaHash(schemaText)) return prebuilt.validate;
  // compiled now: no optimising pass over the generated code, which costs more than it saves once
  return newAjv(name, { code: { optimize: false } }).compile(JSON.parse(schemaText) as object);
}

/** An Ajv with the shared options of `name` (loaded only when something is compiled). */
export function newAjv(name: SchemaName, extra: Options = {}): Ajv {
  const { Ajv } = require('ajv') as typeof import('ajv');
  return new Ajv({ ...VALIDATOR_OPTIONS[name], ...extra });
}

/**
 * The module `scripts/build-validators.js` writes for `name`: ajv's standalone code of the schema
 * (compiled with the shared options, optimised), with the hash of the schema text.
 */
export function standaloneModule(name: SchemaName, schemaText: string): string {
  type Standalone = { default: (ajv: Ajv, fn: ValidateFunction) => string };
  const standaloneCode = (require('ajv/dist/standalone/index.js') as Standalone).default;
  const ajv = newAjv(name, { code: { source: true } });
  const code = standaloneCode(ajv, ajv.compile(JSON.parse(schemaText) as object));
  const hashLine = `module.exports.schemaHash = ${JSON.stringify(schemaHash(schemaText))};`;
  return `${code}\n${hashLine}\nmodule.exports.validate = module.exports;\n`;
}

/** The generated module at `file`, if there is one. Internal. */
function loadPrebuilt(file: URL): { schemaHash: string; validate: ValidateFunction } | undefined {
  try {
    return require(fileURLToPath(file)) as { schemaHash: string; validate: ValidateFunction };
  } catch {
    return undefined;
  }
}
