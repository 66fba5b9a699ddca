import { beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../src/api/openapi.js';
import { recordedExamples, type RecordedExamples } from '../../src/api/openapi/examples.js';
import { allRoutes } from '../../src/api/routes.js';
import { configFrom } from '../../src/config/load.js';
import { docValidator, eachOperation, mediaExamples, type Doc, type Schema } from './doc-ajv.js';
import { recordExamples } from './record-examples.js';

const doc = buildOpenApi(allRoutes, configFrom({})) as unknown as Doc;
const compile = docValidator(doc);

/** Every example of the document with the schema it must satisfy. Internal. */
function allExamples(): Array<{ where: string; schema: Schema; value: unknown }> {
  const out: Array<{ where: string; schema: Schema; value: unknown }> = [];
  for (const { method, path, op } of eachOperation(doc)) {
    const at = `${method.toUpperCase()} ${path}`;
    for (const p of op.parameters)
      if (p.example !== undefined) out.push({ where: `${at} ${p.in}.${p.name}`, schema: p.schema, value: p.example });
    for (const m of Object.values(op.requestBody?.content ?? {}))
      for (const v of mediaExamples(m)) out.push({ where: `${at} request body`, schema: m.schema, value: v });
    for (const [status, r] of Object.entries(op.responses)) {
      for (const m of Object.values(r.content))
        for (const v of mediaExamples(m)) out.push({ where: `${at} ${status}`, schema: m.schema, value: v });
    }
  }
  for (const [name, s] of Object.entries(doc.components.schemas))
    for (const v of (s.examples as unknown[] | undefined) ?? [])
      out.push({ where: `components/schemas/${name}`, schema: { $ref: name }, value: v });
  for (const [name, h] of Object.entries(doc.components.headers))
    if (h.example !== undefined) out.push({ where: `components/headers/${name}`, schema: h.schema, value: h.example });
  return out;
}

describe('/openapi.json has examples everywhere, and every example is valid (issue 13, item 19)', () => {
  it('every operation has a description; every parameter a description and an example', () => {
    const missing: string[] = allRoutes
      .filter((r) => !r.description)
      .map((r) => `${r.method.toUpperCase()} ${r.path}: the route has no description`);
    for (const { method, path, op } of eachOperation(doc)) {
      const at = `${method.toUpperCase()} ${path}`;
      if (!op.description) missing.push(`${at}: description`);
      for (const p of op.parameters) {
        if (!p.description) missing.push(`${at} ${p.name}: description`);
        if (p.example === undefined) missing.push(`${at} ${p.name}: example`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('every request body, every response and every component schema has an example', () => {
    const missing: string[] = [];
    for (const { method, path, op } of eachOperation(doc)) {
      const at = `${method.toUpperCase()} ${path}`;
      for (const m of Object.values(op.requestBody?.content ?? {}))
        if (!mediaExamples(m).length) missing.push(`${at} request body`);
      for (const [status, r] of Object.entries(op.responses))
        for (const m of Object.values(r.content)) if (!mediaExamples(m).length) missing.push(`${at} ${status}`);
    }
    for (const [name, s] of Object.entries(doc.components.schemas))
      if (!(s.examples as unknown[] | undefined)?.length) missing.push(`components/schemas/${name}`);
    expect(
      missing,
      'run `npm run openapi-examples` after adding a route, and reach it in test/openapi/record-examples.ts',
    ).toEqual([]);
  });

  it('every example validates against its schema', () => {
    const examples = allExamples();
    expect(examples.length).toBeGreaterThan(150);
    const broken = examples.flatMap(({ where, schema, value }) => {
      const validate = compile(schema);
      return validate(value)
        ? []
        : [`${where}: ${validate.errors!.map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ')}`];
    });
    expect(broken).toEqual([]);
  });

  it('a committed example that no longer validates is caught', () => {
    const bad = structuredClone(recordedExamples());
    bad.operations.getMe![0]!.response = { ...(bad.operations.getMe![0]!.response as object), extra: 1 };
    const badDoc = buildOpenApi(allRoutes, configFrom({}), { examples: bad }) as unknown as Doc;
    const media = badDoc.paths['/api/v1/me']!.get!.responses['200']!.content['application/json']!;
    expect(compile(media.schema)(mediaExamples(media)[0])).toBe(false);
  });
});

describe('the committed examples are what the server answers today', () => {
  let fresh: RecordedExamples;
  beforeAll(async () => {
    fresh = await recordExamples();
  }, 60_000);

  /** A value with every leaf replaced by its type: ids and times differ between runs, shapes do not. */
  const shape = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(shape)
      : v && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shape(x)]))
        : v === null
          ? null
          : typeof v;

  it('a fresh run reaches the same operations, with the same statuses and answers of the same shape', () => {
    const committed = recordedExamples();
    expect(Object.keys(fresh.operations).sort(), 'run `npm run openapi-examples`').toEqual(
      Object.keys(committed.operations).sort(),
    );
    for (const [id, calls] of Object.entries(committed.operations)) {
      const now = fresh.operations[id]!;
      expect(
        now.map((c) => [c.name, c.status]),
        id,
      ).toEqual(calls.map((c) => [c.name, c.status]));
      for (const [i, c] of calls.entries())
        expect(shape(now[i]!.response), `${id} ${c.name}: run \`npm run openapi-examples\``).toEqual(shape(c.response));
    }
  });
});
