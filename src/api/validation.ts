import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { ApiError, type ErrorDetail } from './errors.js';
import type { JsonSchema } from './route.js';
import { sharedSchemas } from './schemas.js';

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: coerce, strict: false });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  for (const s of Object.values(sharedSchemas)) ajv.addSchema(s as JsonSchema);
  return ajv;
}

/** Bodies are not coerced (`"5"` is not a number); query strings and path params are. */
const bodyAjv = makeAjv(false);
const stringAjv = makeAjv(true);

/** Compiles a body schema once, at start-up. */
export function compileBody(schema: JsonSchema): ValidateFunction {
  return bodyAjv.compile(schema);
}

/** Compiles a query or params schema once (values arrive as strings and are coerced). */
export function compileStrings(schema: JsonSchema): ValidateFunction {
  return stringAjv.compile(schema);
}

/** Compiles a response schema (for tests that check responses against the document). */
export function compileResponse(schema: JsonSchema): ValidateFunction {
  return bodyAjv.compile(schema);
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
