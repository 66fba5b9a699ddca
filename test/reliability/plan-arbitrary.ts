import fc from 'fast-check';
import type { JsonSchema } from '../../src/api/route.js';
import {
  badIds,
  badPins,
  badRawBodies,
  BAD_QUERY_NUMBERS,
  EDGE_NUMBER_TEXTS,
  INJECTION_STRINGS,
  astralString,
  NUMBER_LIKE_STRINGS,
  ODD_CONTENT_TYPES,
  ODD_UNICODE,
  PROTO_KEYS,
} from './nasty-values.js';
import { deref, type OpenApiDoc, type Operation } from './openapi-ops.js';
import { isId, isPin, Lazy, RawJson, validValue } from './schema-arbitraries.js';

export type Auth = 'key' | 'bearer' | 'none' | 'garbage' | 'revoked';

/** A request before the world fills it in: what the fuzzer generates from a seed. */
export interface Plan {
  op: Operation;
  /** Which caller (index modulo the callers). */
  actor: number;
  auth: Auth;
  method: string;
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  /** The JSON body (may hold Lazy and RawJson); undefined sends none. */
  body: unknown;
  /** Sent instead of `body`, verbatim. */
  rawBody?: string;
  headers: Record<string, string>;
  /** Null for a valid request, else what was broken. */
  mutation: string | null;
}

type Mutation = fc.Arbitrary<{ name: string; apply: (p: Plan) => Plan }>;

/** Top-level properties of a body schema (of every alternative of a oneOf). Internal. */
function bodyProps(doc: OpenApiDoc, schema: JsonSchema | undefined): Array<[string, JsonSchema]> {
  if (!schema) return [];
  const s = deref(doc, schema);
  const alts = ((s.oneOf ?? s.anyOf) as JsonSchema[] | undefined)?.map((a) => deref(doc, a)) ?? [];
  const out = new Map<string, JsonSchema>();
  for (const x of [s, ...alts])
    for (const [k, v] of Object.entries((x.properties ?? {}) as Record<string, JsonSchema>)) out.set(k, v);
  return [...out];
}

/** The types a schema allows, after $ref. Internal. */
function kindOf(doc: OpenApiDoc, s: JsonSchema): string {
  const d = deref(doc, s);
  const t = Array.isArray(d.type) ? String(d.type[0]) : String(d.type ?? (d.properties ? 'object' : 'any'));
  return t;
}

const withBody = (p: Plan, f: (b: Record<string, unknown>) => void): Plan => {
  const b =
    p.body && typeof p.body === 'object' && !Array.isArray(p.body) ? copyObject(p.body as Record<string, unknown>) : {};
  f(b);
  return { ...p, body: b, rawBody: undefined };
};

/** Copies an object keeping own keys like `__proto__` as plain data. */
export function copyObject(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o))
    Object.defineProperty(out, k, { value: o[k], enumerable: true, writable: true, configurable: true });
  return out;
}

const set = (b: Record<string, unknown>, k: string, v: unknown) =>
  Object.defineProperty(b, k, { value: v, enumerable: true, writable: true, configurable: true });

/** The mutations that apply to `op`: each breaks one thing of a valid request. Internal. */
function mutations(doc: OpenApiDoc, op: Operation): Mutation[] {
  const props = bodyProps(doc, op.body);
  const required = op.body ? ((deref(doc, op.body).required as string[] | undefined) ?? []) : [];
  const pick = <T>(arr: readonly T[], n: number) => arr[n % arr.length]!;
  const m: Mutation[] = [];
  const named = (name: string, arb: fc.Arbitrary<(p: Plan) => Plan>): Mutation => arb.map((apply) => ({ name, apply }));
  const massAssign = [
    'id',
    'status',
    'balance',
    'amount',
    'sender',
    'sender_pin',
    'user_id',
    'created_at',
    'is_subscribed',
    'extra_field',
  ];

  if (op.body) {
    m.push(
      named(
        'body.extra',
        fc
          .tuple(
            fc.constantFrom(...PROTO_KEYS, ...massAssign),
            fc.constantFrom<unknown>(1, 'x', { isAdmin: true }, null, []),
          )
          .map(
            ([k, v]) =>
              (p) =>
                withBody(p, (b) => set(b, k, v)),
          ),
      ),
    );
    m.push(
      named(
        'body.notObject',
        fc.constantFrom(...badRawBodies()).map((raw) => (p) => ({ ...p, rawBody: raw })),
      ),
    );
    m.push(
      named(
        'body.tooLarge',
        fc
          .integer({ min: 100_001, max: 110_000 })
          .map((n) => (p) => ({ ...p, rawBody: JSON.stringify({ [props[0]?.[0] ?? 'x']: 'a'.repeat(n) }) })),
      ),
    );
    m.push(
      named(
        'body.nearLimit',
        fc
          .integer({ min: 90_000, max: 102_350 })
          .map((n) => (p) => withBody(p, (b) => set(b, props[0]?.[0] ?? 'x', 'é'.repeat(n / 2)))),
      ),
    );
  }
  if (required.length)
    m.push(
      named(
        'body.missing',
        fc.nat().map((n) => (p) => withBody(p, (b) => delete b[pick(required, n)])),
      ),
    );
  if (props.length) {
    const wrong = fc.constantFrom<unknown>(1, -1, 'x', '', true, null, [], {}, ['a', 'b'], { $ref: '#' }, 1.5);
    m.push(
      named(
        'body.wrongType',
        fc.tuple(fc.nat(), wrong).map(
          ([n, v]) =>
            (p) =>
              withBody(p, (b) => set(b, pick(props, n)[0], v)),
        ),
      ),
    );
  }
  const numeric = props.filter(([, s]) => ['number', 'integer'].includes(kindOf(doc, s)));
  if (numeric.length) {
    m.push(
      named(
        'body.edgeNumber',
        fc.tuple(fc.nat(), fc.constantFrom(...EDGE_NUMBER_TEXTS)).map(
          ([n, t]) =>
            (p) =>
              withBody(p, (b) => set(b, pick(numeric, n)[0], new RawJson(t))),
        ),
      ),
    );
    m.push(
      named(
        'body.numberLike',
        fc.tuple(fc.nat(), fc.constantFrom(...NUMBER_LIKE_STRINGS)).map(
          ([n, t]) =>
            (p) =>
              withBody(p, (b) => set(b, pick(numeric, n)[0], t)),
        ),
      ),
    );
  }
  const strings = props.filter(([, s]) => kindOf(doc, s) === 'string');
  if (strings.length) {
    const huge = (s: JsonSchema, n: number): string => {
      const max = Number(deref(doc, s).maxLength ?? 100);
      const odd = pick(ODD_UNICODE, n);
      return pick(
        [
          ' '.repeat(5),
          '',
          'a'.repeat(max + 1),
          astralString(max),
          astralString(max + 1),
          odd.repeat(Math.ceil(max / odd.length) + 1),
          odd,
          pick(INJECTION_STRINGS, n >> 3),
          'x'.repeat(40_000),
        ],
        n,
      );
    };
    m.push(
      named(
        'body.nastyString',
        fc.nat().map((n) => (p) => withBody(p, (b) => set(b, pick(strings, n)[0], huge(pick(strings, n)[1], n >> 2)))),
      ),
    );
  }
  const arrays = props.filter(([, s]) => kindOf(doc, s) === 'array');
  if (arrays.length) {
    m.push(
      named(
        'body.hugeArray',
        fc.tuple(fc.nat(), fc.constantFrom(0, 1, 2, 3)).map(
          ([n, how]) =>
            (p) =>
              withBody(p, (b) => {
                const [k, s] = pick(arrays, n);
                const max = Number(deref(doc, s).maxItems ?? 100);
                set(
                  b,
                  k,
                  how === 0
                    ? []
                    : how === 1
                      ? Array.from({ length: max + 1 }, (_, i) => `P${i}`)
                      : how === 2
                        ? Array.from({ length: 5_000 }, () => 'AAAAAA')
                        : [[['nested']]],
                );
              }),
        ),
      ),
    );
  }
  const pins = props.filter(
    ([k, s]) =>
      isPin(s, k) ||
      (kindOf(doc, s) === 'array' && isPin((deref(doc, s).items ?? {}) as JsonSchema, k.replace(/s$/, ''))),
  );
  if (pins.length) {
    m.push(
      named(
        'body.badPin',
        fc.tuple(fc.nat(), fc.nat()).map(
          ([n, j]) =>
            (p) =>
              withBody(p, (b) => {
                const [k, s] = pick(pins, n);
                const one = j % 3 === 0 ? new Lazy('selfPin', 0) : pick(badPins(), j >> 2);
                set(
                  b,
                  k,
                  kindOf(doc, s) === 'array'
                    ? j % 5 === 1
                      ? [new Lazy('pins', j, { count: 1 }), new Lazy('pins', j, { count: 1 })]
                      : [one, new Lazy('pin', j)]
                    : one,
                );
              }),
        ),
      ),
    );
  }
  const ids = props.filter(([k, s]) => isId(s, k));
  if (ids.length)
    m.push(
      named(
        'body.badId',
        fc.tuple(fc.nat(), fc.constantFrom(...badIds())).map(
          ([n, v]) =>
            (p) =>
              withBody(p, (b) => set(b, pick(ids, n)[0], v)),
        ),
      ),
    );
  for (const param of op.pathParams) {
    const bad = isPin(param.schema, param.name) ? [...badPins(), ...badIds()] : [...badIds(), ...badPins()];
    m.push(
      named(
        `params.${param.name}`,
        fc.tuple(fc.constantFrom(...bad), fc.nat()).map(([v, n]) => (p) => ({
          ...p,
          params: {
            ...p.params,
            [param.name]: n % 7 === 0 && isPin(param.schema, param.name) ? new Lazy('selfPin', 0) : v,
          },
        })),
      ),
    );
  }
  for (const q of op.queryParams) {
    m.push(
      named(
        `query.${q.name}`,
        fc
          .tuple(fc.constantFrom<string>(...BAD_QUERY_NUMBERS, ...badIds().slice(0, 8)), fc.nat())
          .map(([v, n]) => (p) => ({ ...p, query: { ...p.query, [q.name]: n % 6 === 0 ? [v, '1'] : v } })),
      ),
    );
  }
  m.push(
    named(
      'query.extra',
      fc
        .tuple(fc.constantFrom(...PROTO_KEYS, 'foo', 'limit[]', 'since[$gt]'), fc.constantFrom('1', '', 'x'))
        .map(([k, v]) => (p) => ({ ...p, query: { ...p.query, [k]: v } })),
    ),
  );
  m.push(
    named(
      'header.contentType',
      fc
        .constantFrom(...ODD_CONTENT_TYPES)
        .map((ct) => (p) => ({ ...p, headers: { ...p.headers, 'content-type': ct } })),
    ),
  );
  m.push(
    named(
      'header.encoding',
      fc
        .constantFrom('gzip', 'deflate', 'br', 'identity', 'x-unknown')
        .map((e) => (p) => ({ ...p, headers: { ...p.headers, 'content-encoding': e } })),
    ),
  );
  m.push(
    named(
      'auth',
      fc.constantFrom<Auth>('none', 'garbage', 'revoked', 'bearer').map((auth) => (p) => ({ ...p, auth })),
    ),
  );
  m.push(
    named(
      'method',
      fc
        .constantFrom('PUT', 'PATCH', 'OPTIONS', 'HEAD', op.method === 'get' ? 'POST' : 'GET')
        .map((method) => (p) => ({ ...p, method })),
    ),
  );
  if (op.method === 'post') {
    m.push(
      named(
        'header.idempotency',
        fc
          .constantFrom('k'.repeat(256), ' ', 'fuzz-shared-key', 'fuzz-shared-key', '\t')
          .map((k) => (p) => ({ ...p, headers: { ...p.headers, 'idempotency-key': k } })),
      ),
    );
  } else {
    m.push(
      named(
        'body.onRead',
        fc.constantFrom('{"a":1}', '{', 'x'.repeat(110_000)).map((raw) => (p) => ({ ...p, rawBody: raw })),
      ),
    );
  }
  return m;
}

/** A valid request to `op`, with an Idempotency-Key on some POSTs. */
export function validPlan(doc: OpenApiDoc, op: Operation): fc.Arbitrary<Plan> {
  const params: Record<string, fc.Arbitrary<unknown>> = {};
  for (const p of op.pathParams) params[p.name] = validValue(doc, p.schema, p.name);
  const query: Record<string, fc.Arbitrary<unknown>> = {};
  for (const q of op.queryParams) query[q.name] = validValue(doc, q.schema, q.name);
  return fc
    .record({
      actor: fc.nat(),
      params: fc.record(params),
      query: fc.record(query, { requiredKeys: op.queryParams.filter((q) => q.required).map((q) => q.name) }),
      body: op.body ? validValue(doc, op.body) : fc.constant(op.method === 'post' ? {} : undefined),
      idem:
        op.method === 'post'
          ? fc.option(fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme-ascii' }), { freq: 2 })
          : fc.constant(null),
    })
    .map(
      ({ actor, params: pv, query: qv, body, idem }): Plan => ({
        op,
        actor,
        auth: 'key' as Auth,
        method: op.method.toUpperCase(),
        params: pv,
        query: qv,
        body,
        headers: (idem ? { 'idempotency-key': idem } : {}) as Record<string, string>,
        mutation: null,
      }),
    );
}

/** Valid requests and broken ones (1–2 mutations), about 40 % / 60 %. */
export function planArb(doc: OpenApiDoc, ops: readonly Operation[]): fc.Arbitrary<Plan> {
  return fc.constantFrom(...ops).chain((op) => {
    const valid = validPlan(doc, op);
    const muts = mutations(doc, op);
    const broken = fc.tuple(valid, fc.array(fc.oneof(...muts), { minLength: 1, maxLength: 2 })).map(([p, ms]) => {
      let out = p;
      for (const mu of ms) out = mu.apply(out);
      return { ...out, mutation: ms.map((x) => x.name).join('+') };
    });
    return fc.oneof({ weight: 2, arbitrary: valid }, { weight: 3, arbitrary: broken });
  });
}
