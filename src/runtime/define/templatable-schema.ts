import type { JsonSchema } from '../contract/types.js';

/** What a string must contain to be a template where a schema wants a number or a boolean. */
export const TEMPLATE_PATTERN = '\\{\\{|\\{%';

/** The annotation that says which type a templated string stands for (read by error messages). */
export const TEMPLATED_TYPE = 'x-templated';

type Node = Record<string, unknown>;
const isNode = (v: unknown): v is Node => v !== null && typeof v === 'object' && !Array.isArray(v);
const typesOf = (n: Node): string[] =>
  typeof n.type === 'string' ? [n.type] : Array.isArray(n.type) ? (n.type as string[]) : [];
const SCALARS = new Set(['number', 'integer', 'boolean']);

/** Applies `f` to a schema node and every sub-schema in it (properties, items, anyOf …). Internal. */
function walk(n: unknown, f: (n: Node) => Node): unknown {
  if (!isNode(n)) return n;
  const out: Node = f({ ...n });
  for (const k of ['properties', 'patternProperties', 'definitions', '$defs']) {
    if (isNode(out[k]))
      out[k] = Object.fromEntries(Object.entries(out[k] as Node).map(([name, s]) => [name, walk(s, f)]));
  }
  for (const k of ['items', 'additionalProperties', 'not', 'if', 'then', 'else'])
    if (isNode(out[k])) out[k] = walk(out[k], f);
  for (const k of ['items', 'anyOf', 'oneOf', 'allOf'])
    if (Array.isArray(out[k])) out[k] = (out[k] as unknown[]).map((s) => walk(s, f));
  return out;
}

/**
 * An action's argument schema as a bot file may fill it: where it wants a number, an integer or
 * a boolean, a template string (`"{{ match.max }}"`) is accepted too — its value is known only
 * when the step runs, where it is checked (see {@link coerceRendered}). A literal is checked as
 * the schema says (`max: 0` against `minimum: 1`; `max: abc` is neither a number nor a template).
 *
 * @example acceptTemplates({ type: 'integer', minimum: 1 }) // { type: ['integer', 'string'],
 * pattern: '\\{\\{|\\{%', minimum: 1, 'x-templated': 'integer' }
 */
export function acceptTemplates(schema: JsonSchema): JsonSchema {
  return walk(schema, (n) => {
    const types = typesOf(n);
    if (
      types.length === 0 ||
      types.includes('string') ||
      !types.some((t) => SCALARS.has(t)) ||
      'enum' in n ||
      'const' in n
    )
      return n;
    return { ...n, type: [...types, 'string'], pattern: TEMPLATE_PATTERN, [TEMPLATED_TYPE]: types.join(' or ') };
  }) as JsonSchema;
}

/**
 * The rendered arguments of a step, with text turned into the number or boolean its schema
 * wants, as `send_money` reads its `amount`: `"6"` → 6, `" 2.5 "` → 2.5, `"true"` → true. Text
 * that is no number stays text, and the schema then refuses it.
 */
export function coerceRendered(schema: JsonSchema, value: unknown): unknown {
  if (!isNode(schema)) return value;
  const types = typesOf(schema);
  if (typeof value === 'string' && !types.includes('string')) {
    const t = value.trim();
    if ((types.includes('number') || types.includes('integer')) && t !== '' && Number.isFinite(Number(t)))
      return Number(t);
    if (types.includes('boolean') && (t === 'true' || t === 'false')) return t === 'true';
    return value;
  }
  if (Array.isArray(value)) {
    const items = schema.items;
    return isNode(items) ? value.map((v) => coerceRendered(items as JsonSchema, v)) : value;
  }
  if (isNode(value)) {
    const props = isNode(schema.properties) ? (schema.properties as Record<string, JsonSchema>) : {};
    const extra = isNode(schema.additionalProperties) ? (schema.additionalProperties as JsonSchema) : undefined;
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        props[k] ? coerceRendered(props[k]!, v) : extra ? coerceRendered(extra, v) : v,
      ]),
    );
  }
  return value;
}
