import { isDeepStrictEqual } from 'node:util';

/** One place where the actual value differs from what was expected. */
export interface Mismatch {
  /** Where, as a path: `body.transaction.status`. */
  path: string;
  /** What was expected, in words or as JSON. */
  expected: string;
  /** The actual value (undefined when missing). */
  actual: unknown;
}

/** Checks a value against a JSON Schema; returns one line per problem (empty when valid). */
export type SchemaCheck = (schema: unknown, value: unknown) => string[];

/**
 * Matcher keywords. Each may be written bare (`{ matches: "^T" }`) or with a `$`
 * (`{ $matches: "^T" }`) for a body whose own field has that name; `$type`, `$absent` and
 * `$schema` only with the `$`, since `type` is a field of transactions and conversations.
 */
export const MATCHER_KEYS = [
  'equals',
  'in',
  'matches',
  'flags',
  'min',
  'max',
  'gt',
  'lt',
  'approx',
  'tolerance',
  'contains',
  'length',
  'each',
  'not',
] as const;
const DOLLAR_ONLY = ['$type', '$absent', '$schema'];
const ALL_KEYS = new Set<string>([...MATCHER_KEYS, ...MATCHER_KEYS.map((k) => `$${k}`), ...DOLLAR_ONLY]);
const TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'];

/** A mapping made only of matcher keywords (at least one). */
export function isMatcher(v: unknown): v is Record<string, unknown> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return false;
  const keys = Object.keys(v);
  return keys.length > 0 && keys.every((k) => ALL_KEYS.has(k));
}

/** The value under a matcher keyword, bare or `$`-prefixed. Internal. */
function kw(m: Record<string, unknown>, k: string): unknown {
  return k in m ? m[k] : m[`$${k}`];
}
const has = (m: Record<string, unknown>, k: string) => k in m || `$${k}` in m;

const show = (v: unknown): string => (v === undefined ? 'missing' : JSON.stringify(v));

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/**
 * Matches `actual` against `expected`: partial deep match by default (expected keys must be
 * there and match; other keys are ignored), exact with `strict`. Arrays match element by
 * element and must have the same length (use `contains`, `each` or `length` for looser
 * checks). Mismatches are appended to `out`.
 *
 * @example
 * const out: Mismatch[] = [];
 * matchValue({ status: 'accepted', amount: { min: 1 } }, body.transaction, 'body.transaction', out);
 */
export function matchValue(
  expected: unknown,
  actual: unknown,
  path: string,
  out: Mismatch[],
  opts: { strict?: boolean; schema?: SchemaCheck } = {},
): void {
  if (expected === '$any') {
    if (actual === undefined) out.push({ path, expected: 'present (any value)', actual });
    return;
  }
  if (expected === '$absent') {
    if (actual !== undefined) out.push({ path, expected: 'absent', actual });
    return;
  }
  if (isMatcher(expected)) return matchMatcher(expected, actual, path, out, opts);
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return void out.push({ path, expected: `an array of ${expected.length}`, actual });
    if (actual.length !== expected.length)
      out.push({ path: `${path}.length`, expected: String(expected.length), actual: actual.length });
    expected.forEach((e, i) => matchValue(e, actual[i], `${path}[${i}]`, out, opts));
    return;
  }
  if (expected && typeof expected === 'object') {
    if (!actual || typeof actual !== 'object' || Array.isArray(actual))
      return void out.push({ path, expected: 'an object', actual });
    const a = actual as Record<string, unknown>;
    for (const [k, e] of Object.entries(expected)) matchValue(e, a[k], path ? `${path}.${k}` : k, out, opts);
    if (opts.strict)
      for (const k of Object.keys(a))
        if (!(k in (expected as object)))
          out.push({ path: path ? `${path}.${k}` : k, expected: 'absent (strict)', actual: a[k] });
    return;
  }
  if (!isDeepStrictEqual(expected, actual)) out.push({ path, expected: show(expected), actual });
}

/** Internal. */
function matchMatcher(
  m: Record<string, unknown>,
  v: unknown,
  path: string,
  out: Mismatch[],
  opts: { strict?: boolean; schema?: SchemaCheck },
): void {
  const fail = (expected: string) => out.push({ path, expected, actual: v });
  if (has(m, 'absent')) {
    const want = kw(m, 'absent') !== false;
    if (want !== (v === undefined)) fail(want ? 'absent' : 'present');
    if (want) return;
  }
  if (has(m, 'equals') && !isDeepStrictEqual(kw(m, 'equals'), v)) fail(`equals ${show(kw(m, 'equals'))}`);
  if (has(m, 'in') && !(kw(m, 'in') as unknown[]).some((x) => isDeepStrictEqual(x, v)))
    fail(`one of ${show(kw(m, 'in'))}`);
  if (has(m, 'type')) {
    const t = kw(m, 'type') as string;
    const ok = t === 'integer' ? Number.isInteger(v) : typeOf(v) === t;
    if (!ok) fail(`of type ${t}`);
  }
  if (has(m, 'matches')) {
    const re = new RegExp(String(kw(m, 'matches')), String(kw(m, 'flags') ?? ''));
    if (v === undefined || v === null || !re.test(typeof v === 'string' ? v : JSON.stringify(v)))
      fail(`matching /${kw(m, 'matches')}/${kw(m, 'flags') ?? ''}`);
  }
  const num = (k: string, test: (x: number, n: number) => boolean, words: string) => {
    if (!has(m, k)) return;
    const n = Number(kw(m, k));
    if (typeof v !== 'number' || !test(v, n)) fail(`a number ${words} ${n}`);
  };
  num('min', (x, n) => x >= n, '≥');
  num('max', (x, n) => x <= n, '≤');
  num('gt', (x, n) => x > n, '>');
  num('lt', (x, n) => x < n, '<');
  if (has(m, 'approx')) {
    const target = Number(kw(m, 'approx'));
    const tol = Number(kw(m, 'tolerance') ?? 1e-9);
    if (typeof v !== 'number' || Math.abs(v - target) > tol) fail(`${target} ± ${tol}`);
  }
  if (has(m, 'length')) {
    const len = typeof v === 'string' || Array.isArray(v) ? v.length : undefined;
    if (len === undefined) fail('a list or text (for length)');
    else matchValue(kw(m, 'length'), len, `${path}.length`, out, opts);
  }
  if (has(m, 'contains')) {
    const want = kw(m, 'contains');
    if (typeof v === 'string') {
      if (typeof want !== 'string' || !v.includes(want)) fail(`text containing ${show(want)}`);
    } else if (Array.isArray(v)) {
      if (!v.some((el) => probe(want, el, opts))) fail(`a list containing ${show(want)}`);
    } else fail(`a list or text containing ${show(want)}`);
  }
  if (has(m, 'each')) {
    if (!Array.isArray(v)) fail('a list (for each)');
    else v.forEach((el, i) => matchValue(kw(m, 'each'), el, `${path}[${i}]`, out, opts));
  }
  if (has(m, 'not') && probe(kw(m, 'not'), v, opts)) fail(`not ${show(kw(m, 'not'))}`);
  if ('$schema' in m) {
    if (!opts.schema) throw new Error('$schema needs a schema checker');
    for (const line of opts.schema(m.$schema, v))
      out.push({ path, expected: `valid against the schema: ${line}`, actual: v });
  }
}

/** True when `actual` matches `expected` (no mismatch). */
export function probe(
  expected: unknown,
  actual: unknown,
  opts: { strict?: boolean; schema?: SchemaCheck } = {},
): boolean {
  const out: Mismatch[] = [];
  matchValue(expected, actual, '', out, opts);
  return out.length === 0;
}

/** Checks a matcher's own shape before anything runs: bad regex, bad type name. Returns problems as [path, message]. */
export function checkMatchers(
  expected: unknown,
  path: Array<string | number> = [],
): Array<{ path: Array<string | number>; message: string }> {
  const out: Array<{ path: Array<string | number>; message: string }> = [];
  const walk = (v: unknown, p: Array<string | number>) => {
    if (Array.isArray(v)) return v.forEach((x, i) => walk(x, [...p, i]));
    if (!v || typeof v !== 'object') return;
    const m = v as Record<string, unknown>;
    if (isMatcher(m)) {
      if (has(m, 'matches')) {
        try {
          new RegExp(String(kw(m, 'matches')), String(kw(m, 'flags') ?? ''));
        } catch (err) {
          out.push({ path: [...p, 'matches'], message: `invalid regular expression: ${(err as Error).message}` });
        }
      }
      if (has(m, 'flags') && !has(m, 'matches'))
        out.push({ path: [...p, 'flags'], message: 'flags only apply to matches' });
      if (has(m, 'tolerance') && !has(m, 'approx'))
        out.push({ path: [...p, 'tolerance'], message: 'tolerance only applies to approx' });
      if (has(m, 'type') && !TYPES.includes(String(kw(m, 'type'))))
        out.push({
          path: [...p, '$type'],
          message: `unknown type ${show(kw(m, 'type'))}: expected one of ${TYPES.join(', ')}`,
        });
      if (has(m, 'in') && !Array.isArray(kw(m, 'in'))) out.push({ path: [...p, 'in'], message: 'expected a list' });
      for (const k of ['min', 'max', 'gt', 'lt', 'approx', 'tolerance'])
        if (has(m, k) && typeof kw(m, k) !== 'number' && !(typeof kw(m, k) === 'string'))
          out.push({ path: [...p, k], message: 'expected a number' });
      for (const k of ['contains', 'each', 'not', 'length']) if (has(m, k)) walk(kw(m, k), [...p, k]);
      return;
    }
    for (const [k, x] of Object.entries(m)) walk(x, [...p, k]);
  };
  walk(expected, path);
  return out;
}

/** Renders mismatches as a readable diff: the path, `- expected`, `+ actual`. */
export function formatMismatches(list: Mismatch[], mask: (s: string) => string = (s) => s): string {
  return list
    .map((m) => {
      const actual = m.actual === undefined ? 'missing' : clip(JSON.stringify(m.actual));
      return `  ${m.path || '(value)'}\n    - expected ${mask(m.expected)}\n    + actual   ${mask(actual)}`;
    })
    .join('\n');
}

function clip(s: string, n = 300): string {
  return s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s;
}
