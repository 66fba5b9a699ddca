import { ERRORS } from './errors.js';
import type { JsonSchema, RouteDef } from './route.js';
import { sharedSchemas } from './schemas.js';

/** Rewrites `$ref: 'User'` to `#/components/schemas/User`. Internal. */
function toOpenApi(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toOpenApi);
  if (schema && typeof schema === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(schema)) {
      if (k === '$id') continue;
      out[k] = k === '$ref' && typeof v === 'string' && !v.startsWith('#') ? `#/components/schemas/${v}` : toOpenApi(v);
    }
    return out;
  }
  return schema;
}

function parameters(where: 'path' | 'query', schema: JsonSchema | undefined) {
  const props = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema?.required as string[] | undefined) ?? []);
  return Object.entries(props).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema: toOpenApi(s),
  }));
}

/**
 * The OpenAPI 3.1 document of /api/v1, built from the same route schemas that validate
 * requests, so it cannot drift from the server.
 */
export function buildOpenApi(routes: readonly RouteDef[], version = '0.1.0'): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = `/api/v1${r.path.replace(/:([A-Za-z_]+)/g, '{$1}')}`;
    const responses: Record<string, unknown> = {};
    for (const [status, schema] of Object.entries(r.schemas.responses)) {
      responses[status] = { description: 'Success', content: { 'application/json': { schema: toOpenApi(schema) } } };
    }
    const codes = new Set<string>(['unauthorized', 'rate_limited', 'internal_error', ...(r.errors ?? [])]);
    // Every route checks its query (unknown fields are 400); POST routes parse a JSON body.
    codes.add('validation_failed');
    if (r.method === 'post') codes.add('invalid_json').add('payload_too_large');
    // Any POST write may carry an Idempotency-Key (API.md "Money"), so it may answer these too.
    if (r.method === 'post' && r.write) codes.add('idempotency_key_reused').add('idempotency_key_in_use');
    for (const code of codes) {
      const [status, message] = ERRORS[code as keyof typeof ERRORS] ?? [400, code];
      const entry = (responses[String(status)] ??= {
        description: '',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        'x-error-codes': [],
      }) as { description: string; 'x-error-codes'?: string[] };
      entry.description = entry.description ? `${entry.description}; ${code}` : `${code}: ${message}`;
      // Machine-readable list of the codes behind this status (clients and the fuzz tests read it).
      (entry['x-error-codes'] ??= []).push(code);
    }
    const op: Record<string, unknown> = {
      operationId: `${r.method}${r.path.replace(/[/:]+(\w)/g, (_m, c: string) => c.toUpperCase())}`,
      summary: r.summary,
      tags: r.tags,
      parameters: [...parameters('path', r.schemas.params), ...parameters('query', r.schemas.query)],
      responses,
    };
    if (r.method === 'post') {
      (op.parameters as unknown[]).push({ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 255 } });
    }
    if (r.etag) {
      // an extension: conditional reads, so a poll that finds nothing new costs no body
      (op.parameters as unknown[]).push({ name: 'If-None-Match', in: 'header', required: false, description: 'the ETag of an earlier answer: 304 if nothing changed', schema: { type: 'string' } });
      const etag = { ETag: { description: 'the entity tag of this answer (changes exactly when the body does)', schema: { type: 'string' } } };
      for (const status of Object.keys(r.schemas.responses)) (responses[status] as Record<string, unknown>).headers = etag;
      responses['304'] = { description: 'Not Modified: the answer would be the one whose ETag was sent in If-None-Match. No body; not counted against the rate limit.', headers: etag };
    }
    if (r.schemas.body) op.requestBody = { required: true, content: { 'application/json': { schema: toOpenApi(r.schemas.body) } } };
    if (r.buckets?.length) op['x-rate-limit-buckets'] = ['general', ...r.buckets];
    (paths[path] ??= {})[r.method] = op;
  }
  const schemas: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(sharedSchemas)) schemas[name] = toOpenApi(s);
  return {
    openapi: '3.1.0',
    info: { title: 'pinbot /api/v1', version, description: 'Messaging, wallet with UBI, introductions and contacts. Request bodies are limited to 100 kB.' },
    servers: [{ url: '/' }],
    security: [{ apiKey: [] }, { bearer: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        bearer: { type: 'http', scheme: 'bearer' },
      },
    },
  };
}
