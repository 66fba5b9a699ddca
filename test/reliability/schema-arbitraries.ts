import fc from 'fast-check';
import type { JsonSchema } from '../../src/api/route.js';
import { deref, refName, type OpenApiDoc } from './openapi-ops.js';

/**
 * A value that depends on the state of the world when the request is sent (which users exist,
 * which ids were seen): generation stays a pure function of the seed, and `materialize` fills
 * these in at send time.
 */
export class Lazy {
  constructor(
    readonly kind: 'pin' | 'pins' | 'selfPin' | 'id' | 'text',
    readonly n: number,
    readonly opts: { variant?: 'plain' | 'lower' | 'spaced'; count?: number; min?: number; max?: number } = {},
  ) {}
}

/** JSON text put into a body verbatim (numbers JSON.stringify cannot write, like 1e309). */
export class RawJson {
  constructor(readonly text: string) {}
}

const PIN_NAME = /(^|_)pins?(_code)?$/;
const ID_NAME = /(^|_)id$/;

function types(s: JsonSchema): string[] {
  const t = s.type;
  return Array.isArray(t) ? (t as string[]) : typeof t === 'string' ? [t] : [];
}

/** True when the schema (or a property of this name) is a PIN. */
export function isPin(schema: JsonSchema, name?: string): boolean {
  return refName(schema) === 'Pin' || (!!name && PIN_NAME.test(name) && types(schema).includes('string'));
}

/** Patterns of ids: `^txn_…`, `^[a-z]+_…`. */
const ID_PATTERN = /^\^(\[a-z\]\+|[a-z]+)_/;

/** True when the schema (or a property of this name) is an id, e.g. `before: { pattern: '^txn_…' }`. */
export function isId(schema: JsonSchema, name?: string): boolean {
  if (refName(schema) === 'Id') return true;
  if (!types(schema).includes('string') || schema.enum) return false;
  return (typeof schema.pattern === 'string' && ID_PATTERN.test(schema.pattern)) || (!!name && ID_NAME.test(name));
}

const pinArb = fc
  .tuple(fc.nat(), fc.constantFrom<'plain' | 'lower' | 'spaced'>('plain', 'plain', 'plain', 'plain', 'lower', 'spaced'))
  .map(([n, variant]) => new Lazy('pin', n, { variant }));

/** Amounts as a person types them: mostly small, 2 decimals at most. */
const amountArb = fc
  .oneof(
    { weight: 9, arbitrary: fc.integer({ min: 1, max: 300 }) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 5000 }) },
  )
  .map((c) => c / 100);

function dateArb(): fc.Arbitrary<string> {
  return fc
    .integer({ min: Date.parse('2020-01-01'), max: Date.parse('2035-12-31') })
    .map((ms) => new Date(ms).toISOString().slice(0, 10));
}

/**
 * An arbitrary of values that satisfy `schema` (as far as a schema can say: PINs, ids and free
 * text are Lazy and come from the world). `name` is the property name, a hint for PINs and ids.
 *
 * @example
 * fc.sample(validValue(doc, { type: 'integer', minimum: 1, maximum: 200 }), 3); // [17, 1, 200]
 */
export function validValue(doc: OpenApiDoc, schema: JsonSchema, name?: string, depth = 0): fc.Arbitrary<unknown> {
  if (isPin(schema, name)) return pinArb;
  if (isId(schema, name)) return fc.nat().map((n) => new Lazy('id', n));
  if (refName(schema) === 'Amount' || (name === 'amount' && types(deref(doc, schema)).includes('number')))
    return amountArb;
  const s = deref(doc, schema);
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const alts = (s.oneOf ?? s.anyOf) as JsonSchema[] | undefined;
  if (alts)
    return fc.oneof(...alts.map((a) => validValue(doc, { ...stripAlts(s), ...deref(doc, a) }, name, depth + 1)));
  const t = types(s);
  if (t.includes('object') || s.properties) return objectArb(doc, s, depth);
  if (t.includes('array')) return arrayArb(doc, s, name, depth);
  if (t.includes('integer')) {
    const min = Math.ceil(lower(s, 1) ?? 0);
    const max = Math.floor(upper(s, 1) ?? min + 1000);
    return fc.integer({ min, max: Math.max(min, max) });
  }
  if (t.includes('number')) {
    const min = Math.ceil((lower(s, 0.01) ?? 0) * 100);
    const max = Math.floor((upper(s, 0.01) ?? min / 100 + 1000) * 100);
    return fc.integer({ min, max: Math.max(min, max) }).map((c) => c / 100);
  }
  if (t.includes('boolean')) return fc.boolean();
  if (t.includes('string')) {
    if (s.format === 'date') return dateArb();
    if (typeof s.pattern === 'string') {
      const max = num(s.maxLength, 64);
      return fc
        .stringMatching(new RegExp(s.pattern))
        .filter((v) => [...v].length <= max && [...v].length >= num(s.minLength, 0));
    }
    return fc.nat().map((n) => new Lazy('text', n, { min: num(s.minLength, 0), max: num(s.maxLength, 200) }));
  }
  return fc.constant(null);
}

function stripAlts(s: JsonSchema): JsonSchema {
  const { oneOf: _o, anyOf: _a, ...rest } = s;
  return rest;
}

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** The smallest allowed value, stepping over an exclusive bound. Internal. */
function lower(s: JsonSchema, step: number): number | undefined {
  if (isNum(s.minimum)) return s.minimum;
  if (isNum(s.exclusiveMinimum)) return s.exclusiveMinimum + step;
  return undefined;
}

/** The largest allowed value. Internal. */
function upper(s: JsonSchema, step: number): number | undefined {
  if (isNum(s.maximum)) return s.maximum;
  if (isNum(s.exclusiveMaximum)) return s.exclusiveMaximum - step;
  return undefined;
}

/** A numeric keyword or the fallback. Internal. */
function num(a: unknown, fallback: number): number {
  return isNum(a) ? a : fallback;
}

function objectArb(doc: OpenApiDoc, s: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  const props = (s.properties ?? {}) as Record<string, JsonSchema>;
  const required = (s.required as string[] | undefined) ?? [];
  if (depth > 6) return fc.constant({});
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, v] of Object.entries(props)) model[k] = validValue(doc, v, k, depth + 1);
  return fc.record(model, { requiredKeys: required.filter((k) => k in props) });
}

function arrayArb(doc: OpenApiDoc, s: JsonSchema, name: string | undefined, depth: number): fc.Arbitrary<unknown> {
  const items = (s.items ?? {}) as JsonSchema;
  const minItems = num(s.minItems, 0);
  const maxItems = Math.min(num(s.maxItems, 5), minItems + 3);
  if (isPin(items, name?.replace(/s$/, ''))) {
    return fc
      .tuple(fc.nat(), fc.integer({ min: Math.max(minItems, 0), max: Math.max(minItems, maxItems) }))
      .map(([n, count]) => new Lazy('pins', n, { count }));
  }
  const item = validValue(doc, items, undefined, depth + 1);
  const arr = fc.array(item, { minLength: minItems, maxLength: Math.max(minItems, maxItems) });
  return s.uniqueItems ? arr.map((a) => [...new Map(a.map((x) => [JSON.stringify(x), x])).values()]) : arr;
}
