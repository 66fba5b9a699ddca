import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/** The parts of the document these tests read. */
export interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; headers: Record<string, { schema: Schema; example?: unknown }> };
}
export type Schema = Record<string, unknown>;
export interface Media {
  schema: Schema;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}
export interface Operation {
  operationId: string;
  description?: string;
  parameters: Array<{ name: string; in: string; description?: string; schema: Schema; example?: unknown }>;
  requestBody?: { content: Record<string, Media> };
  responses: Record<
    string,
    { headers?: Record<string, { $ref: string }>; content: Record<string, Media>; 'x-error-codes'?: string[] }
  >;
  'x-rate-limit-buckets'?: string[];
}

/** `#/components/schemas/User` → `User`, so the components can be registered by `$id`. Internal. */
function localRefs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(localRefs);
  if (schema && typeof schema === 'object') {
    return Object.fromEntries(
      Object.entries(schema).map(([k, v]) => [
        k,
        k === '$ref' && typeof v === 'string' ? v.replace('#/components/schemas/', '') : localRefs(v),
      ]),
    );
  }
  return schema;
}

/**
 * A validator for the document's schemas, as a client tool would use them: JSON Schema with
 * formats, components registered by name, and `multipleOf` checked with decimal precision
 * (`0.07` is a multiple of `0.01` although `0.07 / 0.01` is not an integer in floating point).
 */
export function docValidator(doc: Doc): (schema: Schema) => ValidateFunction {
  const ajv = new Ajv({ strict: false, allErrors: true, multipleOfPrecision: 8 });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  for (const [name, s] of Object.entries(doc.components.schemas))
    ajv.addSchema({ ...(localRefs(s) as object), $id: name });
  return (schema) => ajv.compile(localRefs(schema) as Schema);
}

/** Every operation of the document with its method and path. */
export function eachOperation(doc: Doc): Array<{ method: string; path: string; op: Operation }> {
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ method, path, op })),
  );
}

/** The example values of a media type object. */
export function mediaExamples(m: Media): unknown[] {
  return [...(m.example !== undefined ? [m.example] : []), ...Object.values(m.examples ?? {}).map((e) => e.value)];
}
