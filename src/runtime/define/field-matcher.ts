import type { UserRef } from '../../client/types.js';
import { hintFor } from '../../util/suggest.js';
import { compileRegex, regexProblem } from './regex.js';
import { knownFields } from '../contract/event-fields.js';
import type { CheckProblem, ConditionFn, ConditionResult, JsonSchema, TriggerDef } from '../contract/types.js';

/** A field matcher: `amount: { max: 50 }`, `content: { matches: "^hi", flags: i }`, or a scalar (equals). */
export interface Matcher {
  equals?: unknown;
  in?: unknown[];
  matches?: string;
  flags?: string;
  min?: number;
  max?: number;
  contains?: unknown;
}

/** JSON Schema of a matcher (or its scalar shorthand). */
export const matcherSchema: JsonSchema = {
  if: { type: 'object' },
  then: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      equals: { description: 'the field equals this value' },
      in: { type: 'array', description: 'the field is one of these values' },
      matches: {
        type: 'string',
        description:
          'regular expression (RE2 syntax: no backreferences or lookaround) the field ' +
          '(as text) matches; matching takes linear time',
      },
      flags: {
        type: 'string',
        pattern: '^[imsu]*$',
        description:
          'regular expression flags: i (ignore case), m (^ and $ at line ends), s (. ' +
          'matches newlines), u (accepted; text is always Unicode)',
      },
      min: { type: 'number', description: 'the field is a number ≥ this' },
      max: { type: 'number', description: 'the field is a number ≤ this' },
      contains: { description: 'text contains this text; a list contains this item (for lists of users: a PIN or id)' },
    },
  },
  else: { type: ['string', 'number', 'boolean', 'null'], description: 'shorthand for { equals: value }' },
};

/** The value at a dotted path (`sender.pin_code`, `participants.0.id`). */
export function fieldValue(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const seg of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = Object.prototype.hasOwnProperty.call(cur, seg) ? (cur as Record<string, unknown>)[seg] : undefined;
  }
  return cur;
}

const same = (a: unknown, b: unknown) =>
  a === b ||
  (typeof a === 'number' && typeof b === 'string' && String(a) === b) ||
  (typeof b === 'number' && typeof a === 'string' && a === String(b));

function listContains(list: unknown[], item: unknown): boolean {
  return list.some(
    (el) =>
      same(el, item) ||
      (el && typeof el === 'object' && (same((el as UserRef).pin_code, item) || same((el as UserRef).id, item))),
  );
}

const show = (v: unknown) => (v === undefined ? 'missing' : JSON.stringify(v));

/**
 * Checks a field name against the rule's triggers and its regular expression. `o.conditions`:
 * the registered conditions (a near miss of one is suggested); `o.unavailable`: why a plugin's
 * name (`plugin.entry`) is not there — a plugin added while the server runs.
 */
export function checkField(
  field: string,
  spec: unknown,
  triggers: TriggerDef[],
  o: { conditions?: string[]; unavailable?: string } = {},
): CheckProblem[] {
  const out: CheckProblem[] = [];
  const known = new Set(triggers.flatMap((t) => knownFields(t.example)));
  const listy = [...known].some((k) => field.startsWith(`${k}.`) && /^\d+(\.|$)/.test(field.slice(k.length + 1)));
  if (o.unavailable && !known.has(field)) {
    out.push({ path: [], onKey: true, message: `unknown condition "${field}"`, hint: o.unavailable });
  } else if (triggers.length && !known.has(field) && !listy) {
    const names = triggers.map((t) => t.name).join(', ');
    const conditions = o.conditions ?? ['from', 'all', 'any', 'not', 'liquid'];
    out.push({
      path: [],
      onKey: true,
      message: `unknown condition or event field "${field}" for ${names} events`,
      hint: hintFor(field, [...known, ...conditions], 'fields and conditions'),
    });
  }
  const m = spec as Matcher;
  if (m && typeof m === 'object' && typeof m.matches === 'string') {
    const bad = regexProblem(m.matches, typeof m.flags === 'string' ? m.flags : '');
    if (bad) out.push({ path: ['matches'], message: bad.message, hint: bad.hint });
  }
  if (m && typeof m === 'object' && m.flags !== undefined && m.matches === undefined)
    out.push({ path: ['flags'], message: 'flags only apply to matches', hint: 'add matches: "…" or remove flags' });
  out.push(...neverHolds(field, spec, triggers));
  return out;
}

const COMPARISON = /^\s*(<=|>=|<|>|==|!=|=)\s*(-?\d+(?:\.\d+)?)\s*$/;
const NUMERIC = /^\s*-?\d+(\.\d+)?\s*$/;

/** The JSON type of a field in the triggers' example events, when they all agree. Internal. */
function fieldType(field: string, triggers: TriggerDef[]): string | undefined {
  const types = new Set(
    triggers
      .map((t) => fieldValue(t.example, field))
      .filter((v) => v !== undefined && v !== null)
      .map((v) => (Array.isArray(v) ? 'array' : typeof v)),
  );
  return types.size === 1 ? [...types][0] : undefined;
}

/**
 * Matchers that compare a field with a value of a type it never has, so they never hold:
 * `amount: "< 20"` (a number against text), `content: { max: 5 }` (text against a number).
 * Internal.
 */
function neverHolds(field: string, spec: unknown, triggers: TriggerDef[]): CheckProblem[] {
  const type = fieldType(field, triggers);
  if (!type) return [];
  const m: Matcher = spec !== null && typeof spec === 'object' ? (spec as Matcher) : { equals: spec };
  const out: CheckProblem[] = [];
  const textAgainstNumber = (v: unknown, path: Array<string | number>) => {
    if (type !== 'number' || typeof v !== 'string' || NUMERIC.test(v)) return;
    const cmp = COMPARISON.exec(v);
    if (cmp) {
      const [, op, n] = cmp;
      const bound = op === '<' || op === '<=' ? `{ max: ${n} }` : op === '>' || op === '>=' ? `{ min: ${n} }` : n;
      out.push({
        path,
        message:
          `${field}: ${JSON.stringify(v)} is text, and ${field} is a number: a field ` +
          `condition does not read comparisons, so it never holds`,
        hint: `write ${field}: ${bound} (inclusive), or liquid: "event.${field} ${op === '=' ? '==' : op} ${n}"`,
      });
    } else
      out.push({
        path,
        message: `${field}: ${JSON.stringify(v)} is text, and ${field} is a number, so it never holds`,
        hint: `write a number, e.g. ${field}: 5, or ${field}: { min: 1, max: 50 }`,
      });
  };
  if ('equals' in m) textAgainstNumber(m.equals, spec !== null && typeof spec === 'object' ? ['equals'] : []);
  if (Array.isArray(m.in)) m.in.forEach((v, i) => textAgainstNumber(v, ['in', i]));
  for (const k of ['min', 'max'] as const) {
    if (m[k] !== undefined && type !== 'number') {
      out.push({
        path: [k],
        message: `${field} is ${
          type === 'string' ? 'text' : `a${type === 'array' || type === 'object' ? 'n' : ''} ${type}`
        }, and ${k} compares numbers, so it never holds`,
        hint:
          type === 'string' || type === 'array'
            ? `for its length: liquid: "event.${field}.size ${k === 'min' ? '>=' : '<='} ${m[k]}"`
            : `remove ${k}, or compare a number field`,
      });
    }
  }
  return out;
}

/** Compiles one field matcher into a condition. */
export function compileField(field: string, spec: unknown): ConditionFn {
  const m: Matcher = spec !== null && typeof spec === 'object' ? (spec as Matcher) : { equals: spec };
  const re = m.matches !== undefined ? compileRegex(m.matches, m.flags ?? '') : undefined;
  return async ({ scope }) => {
    const v = fieldValue(scope.event, field);
    const parts: ConditionResult[] = [];
    const test = (label: string, ok: boolean) =>
      parts.push({ ok, label: `${field} ${label}`, detail: `${field} = ${show(v)}` });
    if ('equals' in m) test(`equals ${show(m.equals)}`, same(v, m.equals));
    if (m.in)
      test(
        `in ${show(m.in)}`,
        m.in.some((x) => same(v, x)),
      );
    if (re) {
      const found =
        v !== undefined && v !== null ? re.groups(typeof v === 'string' ? v : JSON.stringify(v)) : undefined;
      // named groups are what templates see as match.NAME
      if (found && Object.keys(found).length) scope.match = { ...scope.match, ...found };
      test(`matches /${m.matches}/${m.flags ?? ''}`, found !== undefined);
    }
    if (m.min !== undefined) test(`min ${m.min}`, typeof v === 'number' && v >= m.min);
    if (m.max !== undefined) test(`max ${m.max}`, typeof v === 'number' && v <= m.max);
    if ('contains' in m) {
      const ok =
        typeof v === 'string'
          ? typeof m.contains === 'string' && v.includes(m.contains)
          : Array.isArray(v) && listContains(v, m.contains);
      test(`contains ${show(m.contains)}`, ok);
    }
    if (parts.length === 1) return parts[0]!;
    return { ok: parts.every((p) => p.ok), label: field, detail: `${field} = ${show(v)}`, children: parts };
  };
}
