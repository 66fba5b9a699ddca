import type { JsonSchema } from '../../src/api/route.js';
import { refName, type OpenApiDoc } from './openapi-ops.js';

/** An input the document leaves unbounded. */
export interface Unbounded {
  /** Operation and JSON path, e.g. `POST /api/v1/messages/send body.content`. */
  where: string;
  problem: string;
}

function typesOf(s: JsonSchema): string[] {
  if (Array.isArray(s.type)) return s.type as string[];
  if (typeof s.type === 'string') return [s.type];
  if (s.properties) return ['object'];
  return [];
}

/**
 * Walks every input schema of the document (path, query and header parameters, request bodies,
 * and the components they reference) and lists what a client could make as large as it likes
 * (OWASP API4, unrestricted resource consumption): a string without `maxLength` (or enum/const),
 * an array without `maxItems`, an integer without `maximum`, an object that takes any key.
 * Numbers are left to the domain (an amount's ceiling is `wallet.max_transfer`, a config value);
 * plain string path parameters to the request line.
 *
 * @example
 * expect(unboundedInputs(doc)).toEqual([]);
 */
export function unboundedInputs(doc: OpenApiDoc): Unbounded[] {
  const out: Unbounded[] = [];
  const walk = (s: JsonSchema | undefined, where: string, seen: Set<string>): void => {
    if (!s || typeof s !== 'object') return;
    const ref = refName(s);
    if (ref !== undefined && typeof s.$ref === 'string') {
      if (seen.has(ref)) return;
      walk(doc.components.schemas[ref], `${where}`, new Set([...seen, ref]));
      return;
    }
    for (const key of ['oneOf', 'anyOf', 'allOf'] as const) {
      for (const [i, alt] of ((s[key] as JsonSchema[] | undefined) ?? []).entries())
        walk(alt, `${where}(${key}[${i}])`, seen);
    }
    if (s.const !== undefined || Array.isArray(s.enum)) return;
    const types = typesOf(s);
    if (types.includes('string') && typeof s.maxLength !== 'number')
      out.push({ where, problem: 'string without maxLength' });
    if (types.includes('integer') && typeof s.maximum !== 'number' && typeof s.exclusiveMaximum !== 'number')
      out.push({ where, problem: 'integer without maximum' });
    if (types.includes('array')) {
      if (typeof s.maxItems !== 'number') out.push({ where, problem: 'array without maxItems' });
      walk(s.items as JsonSchema | undefined, `${where}[]`, seen);
    }
    if (types.includes('object')) {
      if (s.additionalProperties !== false && typeof s.maxProperties !== 'number')
        out.push({ where, problem: 'object that takes any key (no additionalProperties: false)' });
      for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, JsonSchema>))
        walk(v, `${where}.${k}`, seen);
    }
  };
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const at = `${method.toUpperCase()} ${path}`;
      for (const p of op.parameters ?? []) {
        // A path `:id` is opaque and any length of it is a 404 (API.md), so it has no maxLength:
        // the request line bounds it (node refuses a request line and headers past 16 KiB, 431).
        if (p.in === 'path' && p.schema && !p.schema.$ref && typesOf(p.schema).join() === 'string') continue;
        walk(p.schema, `${at} ${p.in}.${p.name}`, new Set());
      }
      walk(op.requestBody?.content['application/json']?.schema, `${at} body`, new Set());
    }
  }
  return out;
}

/** The request body limit the document states (info.description, "… limited to N kB"), in bytes. */
export function documentedBodyLimit(doc: OpenApiDoc): number | undefined {
  const m = /limited to (\d+) kB/.exec(doc.info?.description ?? '');
  return m ? Number(m[1]) * 1024 : undefined;
}
