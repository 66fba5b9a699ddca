import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { buildOpenApi } from '../api/openapi.js';
import { allRoutes } from '../api/routes.js';
import { configFrom } from '../config/load.js';
import { hintFor } from '../util/suggest.js';

/**
 * JSON Schema asserts of scenarios, with `$ref` into the API's own OpenAPI document (built by
 * the same builder `GET /openapi.json` serves, so it cannot drift):
 * `schema: { $ref: "#/components/schemas/Message" }`, any JSON pointer into the document, or
 * `schema: { response: "POST /wallet/send" }` for an operation's documented success response.
 */
const DOC_ID = 'openapi.json';
/** The document depends on the config (its bounds); one per config a scenario uses. */
const docs = new Map<string, { doc: Record<string, any>; ajv: Ajv; compiled: Map<string, ValidateFunction> }>();

function openapi(config: Record<string, unknown> = {}) {
  const key = JSON.stringify(config);
  let d = docs.get(key);
  if (d) return d;
  let cfg;
  try {
    cfg = configFrom(config);
  } catch {
    cfg = configFrom({}); // config problems are reported on their own, with positions
  }
  const doc = buildOpenApi(allRoutes, cfg) as Record<string, any>;
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  ajv.addSchema(doc, DOC_ID);
  d = { doc, ajv, compiled: new Map() };
  docs.set(key, d);
  return d;
}

/** The OpenAPI document the asserts use (the server's own, for a scenario's config overrides). */
export function openapiDocument(config: Record<string, unknown> = {}): Record<string, any> {
  return openapi(config).doc;
}

/** Resolves a JSON pointer (`#/components/schemas/User`) in the document; undefined when absent. */
function pointer(ref: string): unknown {
  let cur: unknown = openapi().doc;
  for (const raw of ref.replace(/^#\/?/, '').split('/').filter(Boolean)) {
    const seg = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!cur || typeof cur !== 'object' || !(seg in (cur as object))) return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

/** `POST /wallet/send` or `POST /wallet/send 201` → the pointer to its response schema, or a problem. */
function responsePointer(spec: string): { ref?: string; problem?: string } {
  const m = /^\s*(GET|POST|DELETE|PUT|PATCH)\s+(\/\S*)(?:\s+(\d{3}))?\s*$/i.exec(spec);
  if (!m)
    return {
      problem:
        `expected "METHOD /path" or "METHOD /path STATUS" (like "GET ` +
        `/wallet/balance"), found ${JSON.stringify(spec)}`,
    };
  const method = m[1]!.toLowerCase();
  const raw = m[2]!.replace(/^\/api\/v1/, '');
  const paths = openapi().doc.paths as Record<string, Record<string, any>>;
  // `/wallet/transactions/:id/accept` and `/wallet/transactions/{id}/accept` both name the template
  const want = `/api/v1${raw.replace(/:([A-Za-z_]+)/g, '{$1}')}`;
  const path =
    Object.keys(paths).find((p) => p === want) ??
    Object.keys(paths).find((p) => new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(want));
  if (!path || !paths[path]![method])
    return {
      problem: `no operation ${method.toUpperCase()} ${raw} in the OpenAPI document — ${hintFor(
        `${method.toUpperCase()} ${raw}`,
        Object.entries(paths).flatMap(([p, ops]) =>
          Object.keys(ops).map((o) => `${o.toUpperCase()} ${p.replace('/api/v1', '')}`),
        ),
        'operations',
      )}`,
    };
  const responses = paths[path]![method].responses as Record<string, unknown>;
  const status = m[3] ?? Object.keys(responses).find((s) => s.startsWith('2'));
  if (!status || !responses[status])
    return {
      problem:
        `${method.toUpperCase()} ${raw} documents no ${m[3] ?? 'success'} response; it ` +
        `documents ${Object.keys(responses).join(', ')}`,
    };
  const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
  return { ref: `#/paths/${esc(path)}/${method}/responses/${status}/content/${esc('application/json')}/schema` };
}

/** Every `$ref` and `response` of a schema, with its path inside the schema. Internal. */
function refsOf(
  schema: unknown,
  path: Array<string | number> = [],
): Array<{ path: Array<string | number>; key: '$ref' | 'response'; value: string }> {
  if (Array.isArray(schema)) return schema.flatMap((s, i) => refsOf(s, [...path, i]));
  if (!schema || typeof schema !== 'object') return [];
  const out: Array<{ path: Array<string | number>; key: '$ref' | 'response'; value: string }> = [];
  for (const [k, v] of Object.entries(schema)) {
    if ((k === '$ref' || (k === 'response' && path.length === 0)) && typeof v === 'string')
      out.push({ path: [...path, k], key: k, value: v });
    else out.push(...refsOf(v, [...path, k]));
  }
  return out;
}

/** Problems with a schema's references, before anything runs: each names where and what exists. */
export function checkSchemaRefs(
  schema: unknown,
): Array<{ path: Array<string | number>; message: string; hint?: string }> {
  const out: Array<{ path: Array<string | number>; message: string; hint?: string }> = [];
  for (const r of refsOf(schema)) {
    if (r.key === 'response') {
      const p = responsePointer(r.value);
      if (p.problem) out.push({ path: r.path, message: p.problem });
      continue;
    }
    if (!r.value.startsWith('#')) {
      out.push({
        path: r.path,
        message: `a $ref points into the API's OpenAPI document and starts with "#/", found ${JSON.stringify(r.value)}`,
        hint: 'e.g. "#/components/schemas/User"',
      });
      continue;
    }
    if (pointer(r.value) === undefined) {
      const names = Object.keys(openapi().doc.components.schemas);
      const name = r.value.split('/').pop() ?? '';
      out.push({
        path: r.path,
        message: `no schema ${r.value} in the API's OpenAPI document`,
        hint:
          `${hintFor(name, names, 'component schemas')}; for a whole response use { ` +
          `response: "GET /wallet/balance" }`,
      });
    }
  }
  return out;
}

/** Rewrites `#/…` refs to the document and `response:` to its schema. Internal. */
function toDocRefs(schema: unknown, top = true): unknown {
  if (Array.isArray(schema)) return schema.map((s) => toDocRefs(s, false));
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === '$ref' && typeof v === 'string' && v.startsWith('#')) out.$ref = `${DOC_ID}${v}`;
    else if (k === 'response' && top && typeof v === 'string') {
      const p = responsePointer(v);
      if (!p.ref) throw new Error(p.problem);
      out.$ref = `${DOC_ID}${p.ref}`;
    } else out[k] = toDocRefs(v, false);
  }
  return out;
}

/**
 * Validates a value against a scenario schema; one line per problem (`/transaction/status must
 * be equal to one of the allowed values`), empty when valid.
 *
 * @example checkSchema({ $ref: '#/components/schemas/User' }, body.sender) // []
 */
export function checkSchema(schema: unknown, value: unknown, config: Record<string, unknown> = {}): string[] {
  const key = JSON.stringify(schema);
  const d = openapi(config);
  let validate = d.compiled.get(key);
  if (!validate) {
    validate = d.ajv.compile(toDocRefs(schema) as object);
    d.compiled.set(key, validate);
  }
  if (validate(value)) return [];
  return (validate.errors ?? [])
    .slice(0, 10)
    .map(
      (e) =>
        `${e.instancePath || '(root)'} ` +
        `${e.message ?? 'is invalid'}${
          e.params && 'additionalProperty' in e.params
            ? ` (${String((e.params as { additionalProperty: string }).additionalProperty)})`
            : ''
        }`,
    );
}
