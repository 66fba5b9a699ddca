import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/api/errors.js';
import type { JsonSchema, RouteDef } from '../../src/api/route.js';
import { allRoutes } from '../../src/api/routes.js';
import { testApi, type TestApi } from '../helpers/api.js';

// Issue 13 item 16 and API.md: ids are opaque; a path `:id` that names nothing the caller can
// see — unknown, of another type, malformed, any length or character — is 404 with that
// resource's not-found code, never 400. Every route of the table is covered, so a new `:id`
// route is tested the moment it is added.

/** The path parameters this API has, and how this test treats each. */
const PARAM_KINDS: Record<string, 'opaque id' | 'pin'> = { id: 'opaque id', pin: 'pin' };

const params = (r: RouteDef) => [...r.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);
const idRoutes = allRoutes.filter((r) => params(r).includes('id'));

/** The resource's not-found code a route declares (`conversation_not_found`, …). */
const notFoundCode = (r: RouteDef) =>
  (r.errors ?? []).filter((c) => c.endsWith('_not_found') && c !== 'user_not_found');

/** A minimal valid body for a route's body schema (required strings get text). */
function validBody(schema: JsonSchema | undefined): Record<string, unknown> | undefined {
  if (!schema) return undefined;
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const out: Record<string, unknown> = {};
  for (const k of (schema.required as string[] | undefined) ?? []) out[k] = props[k]?.type === 'number' ? 1 : 'hello';
  return out;
}

/** Ids as they go on the wire (already percent-encoded where needed). */
const MALFORMED: Array<[string, string]> = [
  ['very long', 'x'.repeat(5000)],
  ['an encoded slash', 'a%2Fb'],
  ['an emoji', encodeURIComponent('😀')],
  ['an invalid percent-encoding', '%ZZ'],
  ['a truncated UTF-8 sequence', '%E0%A4%A'],
  ['a NUL byte', '%00'],
  ['a space', '%20'],
  ['a prototype key', '__proto__'],
  ['constructor', 'constructor'],
  ['dots', '%2E%2E'],
  ['an unknown id of the right shape', 'txn_0000000000000000000000'],
];

describe('every :id route answers 404 with its not-found code for any id the caller cannot see', () => {
  let api: TestApi;
  let alice: Awaited<ReturnType<TestApi['user']>>;
  beforeAll(async () => {
    api = await testApi();
    alice = await api.user('Alice');
  });
  afterAll(() => api.close());

  it(
    'the route table has :id routes, each declaring exactly one not-found code, and no ' + 'unknown kind of parameter',
    () => {
      expect(idRoutes.length).toBeGreaterThanOrEqual(9);
      for (const r of idRoutes)
        expect(notFoundCode(r), `${r.method} ${r.path}: list its *_not_found code in errors`).toHaveLength(1);
      const unknown = allRoutes.flatMap((r) =>
        params(r)
          .filter((p) => !(p in PARAM_KINDS))
          .map((p) => `${r.method} ${r.path} :${p}`),
      );
      expect(unknown, 'a new kind of path parameter: decide how it answers a malformed value and add it here').toEqual(
        [],
      );
    },
  );

  const cases = idRoutes.flatMap((r) =>
    [...MALFORMED, ["a real id of another type (the caller's user id)", 'SELF']].map(
      ([what, id]) => [`${r.method.toUpperCase()} ${r.path}`, what!, id!, r] as const,
    ),
  );

  it.each(cases)('%s with %s', async (_route, _what, raw, r) => {
    const id = raw === 'SELF' ? alice.user.id : raw;
    const path = `/api/v1${r.path.replace(':id', id)}`;
    const req =
      r.method === 'get' ? api.http.get(path) : r.method === 'delete' ? api.http.delete(path) : api.http.post(path);
    const body = validBody(r.schemas.body);
    const res = await (body ? req.set(alice.headers).send(body) : req.set(alice.headers));
    const code = notFoundCode(r)[0]!;
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 404, code });
    expect(res.body.error.message).toBe(ERRORS[code as keyof typeof ERRORS][1]);
  });
});
