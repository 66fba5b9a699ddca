import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { ApiError, type ErrorDetail } from './errors.js';
import type { JsonSchema } from './route.js';
import { sharedSchemas } from './schemas.js';

function makeAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: false, strict: false });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  for (const s of Object.values(sharedSchemas)) ajv.addSchema(s as JsonSchema);
  return ajv;
}

/**
 * Nothing is coerced by ajv: bodies are JSON (`"5"` is not a number), and query strings and
 * path params are turned into numbers by `fromStrings` below, which reads decimal digits only.
 */
const ajv = makeAjv();

type Scalar = 'integer' | 'number' | 'boolean';

/** The declared type of each property of a query / params schema (through `$ref`s). Internal. */
function scalarTypes(schema: JsonSchema): Map<string, Scalar> {
  const out = new Map<string, Scalar>();
  const shared = sharedSchemas as Record<string, JsonSchema>;
  for (const [name, prop] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    const s = typeof prop.$ref === 'string' ? (shared[prop.$ref] ?? prop) : prop;
    if (s.type === 'integer' || s.type === 'number' || s.type === 'boolean') out.set(name, s.type);
  }
  return out;
}

const DECIMAL: Record<Scalar, RegExp> = {
  integer: /^-?[0-9]+$/,
  number: /^-?[0-9]+(\.[0-9]+)?$/,
  boolean: /^(true|false)$/,
};

/**
 * Strings of a query or params object as the numbers (booleans) their schema declares, when
 * they are written as plain decimals: `"50"` → 50, but `"0x10"`, `"0b11"`, `"1e3"`, `" 1"`,
 * `""` and integers past 2^53 stay strings, so the schema refuses them (400). Internal.
 */
function fromStrings(data: Record<string, unknown>, types: Map<string, Scalar>): void {
  for (const [name, type] of types) {
    const v = data[name];
    if (typeof v !== 'string' || !DECIMAL[type].test(v)) continue;
    if (type === 'boolean') data[name] = v === 'true';
    else {
      const n = Number(v);
      if (type === 'number' ? Number.isFinite(n) : Number.isSafeInteger(n)) data[name] = n;
    }
  }
}

/** Compiles a body schema once, at start-up. */
export function compileBody(schema: JsonSchema): ValidateFunction {
  return ajv.compile(schema);
}

/**
 * Compiles a query or params schema once. Values arrive as strings; those the schema declares
 * as numbers are read as plain decimals only (see `fromStrings`).
 */
export function compileStrings(schema: JsonSchema): ValidateFunction {
  const validate = ajv.compile(schema);
  const types = scalarTypes(schema);
  const fn = ((data: unknown) => {
    if (data && typeof data === 'object') fromStrings(data as Record<string, unknown>, types);
    const ok = validate(data);
    fn.errors = validate.errors;
    return ok;
  }) as ValidateFunction;
  fn.schema = validate.schema;
  return fn;
}

/** Compiles a response schema (for tests that check responses against the document). */
export function compileResponse(schema: JsonSchema): ValidateFunction {
  return ajv.compile(schema);
}

/** Turns ajv errors into `details` entries: the JSON path of the field and what was expected. */
export function toDetails(where: 'body' | 'query' | 'params', errors: ErrorObject[] | null | undefined): ErrorDetail[] {
  return (errors ?? []).map((e) => {
    let path = `${where}${e.instancePath.replace(/\//g, '.')}`;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties') {
      const extra = (e.params as { additionalProperty: string }).additionalProperty;
      path = `${path}.${extra}`;
      message = 'is not a known field; remove it';
    } else if (e.keyword === 'type' && where !== 'body' && (e.params as { type: string }).type === 'integer') {
      message = 'must be a whole number in decimal digits, e.g. 50';
    } else if (e.keyword === 'required') {
      path = `${path}.${(e.params as { missingProperty: string }).missingProperty}`;
      message = 'is required';
    }
    return { path, message };
  });
}

/** Validates `value` in place (defaults, coercion) or throws 400 validation_failed. */
export function check(fn: ValidateFunction, where: 'body' | 'query' | 'params', value: unknown): void {
  if (!fn(value)) throw new ApiError('validation_failed', undefined, toDetails(where, fn.errors));
}
