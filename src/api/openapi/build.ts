import { STATUS_CODES } from 'node:http';
import type { Config } from '../../config/schema.js';
import { bindConfig } from '../config-bound.js';
import { ERRORS } from '../errors.js';
import type { JsonSchema, RouteDef } from '../route.js';
import { introductionSchema } from '../introductions/routes.js';
import { conversationSchema } from '../messaging/schemas.js';
import { sharedSchemas } from '../schemas.js';
import { balanceSchema, subscriptionSchema, transactionSchema } from '../wallet/schemas.js';
import { examplesMap, recordedExamples, type RecordedCall, type RecordedExamples } from './examples.js';
import { headersFor, RESPONSE_HEADERS } from './headers.js';
import { paramDescription } from './params.js';

/**
 * Response schemas the document names as components (so a client, or a scenario's
 * `$ref: '#/components/schemas/Transaction'`, can say "a valid Transaction" in one line). Where
 * a route's schema contains one of these objects, the document shows a `$ref`. Internal.
 */
const NAMED: ReadonlyMap<object, string> = new Map<object, string>([
  [transactionSchema, 'Transaction'],
  [balanceSchema, 'Balance'],
  [subscriptionSchema, 'Subscription'],
  [conversationSchema, 'Conversation'],
  [introductionSchema, 'Introduction'],
]);

/**
 * A route schema as the document shows it: `$ref: 'User'` → `#/components/schemas/User`, no
 * `$id`, and the keywords of `x-openapi` merged in — those the domain enforces with its own
 * error codes (an amount's `multipleOf` is 400 `invalid_amount`, not `validation_failed`), so
 * the request validator does not carry them. Internal.
 */
export function toOpenApi(schema: unknown, named: ReadonlyMap<object, string> = NAMED, top = true): unknown {
  if (Array.isArray(schema)) return schema.map((s) => toOpenApi(s, named, false));
  if (schema && typeof schema === 'object') {
    const name = named.get(schema);
    if (name && !top) return { $ref: `#/components/schemas/${name}` };
    const out: Record<string, unknown> = {};
    const src = schema as Record<string, unknown>;
    for (const [k, v] of Object.entries(src)) {
      if (k === '$id' || k === 'x-openapi') continue;
      out[k] =
        k === '$ref' && typeof v === 'string' && !v.startsWith('#')
          ? `#/components/schemas/${v}`
          : toOpenApi(v, named, false);
    }
    for (const [k, v] of Object.entries((src['x-openapi'] ?? {}) as Record<string, unknown>))
      out[k] = toOpenApi(v, named, false);
    return out;
  }
  return schema;
}

/** `postWalletTransactionsIdAccept` for `POST /wallet/transactions/:id/accept`. */
export function operationId(route: Pick<RouteDef, 'method' | 'path'>): string {
  return `${route.method}${route.path.replace(/[/:]+(\w)/g, (_m, c: string) => c.toUpperCase())}`;
}

/** An error body of the catalogue, as the server renders it without a custom message. Internal. */
function catalogueBody(code: string): unknown {
  const [, message] = ERRORS[code as keyof typeof ERRORS] ?? [400, code];
  const error: Record<string, unknown> = { code, message };
  if (code === 'validation_failed')
    error.details = [{ path: 'body.content', message: 'must contain something besides whitespace' }];
  if (code === 'rate_limited') error.retry_after = 42;
  return { error };
}

function parameters(route: RouteDef, where: 'path' | 'query', schema: JsonSchema | undefined, calls: RecordedCall[]) {
  const props = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema?.required as string[] | undefined) ?? []);
  return Object.entries(props).map(([name, s]) => {
    const seen = calls.map((c) => (where === 'path' ? c.params : c.query)?.[name]).find((v) => v !== undefined);
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      description: paramDescription(route, name, s),
      schema: toOpenApi(s),
      ...(seen !== undefined ? { example: seen } : {}),
    };
  });
}

/** The routes' own descriptions, with what every operation shares appended. Internal. */
function description(r: RouteDef): string {
  const parts = [r.description ?? r.summary];
  if (r.buckets?.length) {
    const when = r.bucketWhen
      ? ` (${Object.keys(r.bucketWhen).join(', ')}: only ` +
        `${r.bucketWhen.groups ? 'when creating a group' : 'some requests'})`
      : '';
    parts.push(`Rate limits: general and ${r.buckets.join(', ')}${when}.`);
  }
  if (r.method === 'post' && r.write)
    parts.push('Send an Idempotency-Key to make a retry safe: the first answer is replayed, nothing is done twice.');
  return parts.join('\n\n');
}

const TAGS = [
  { name: 'profile', description: 'Who you are' },
  { name: 'wallet', description: 'Balance, transfers (escrowed until accepted or declined), UBI, subscription' },
  { name: 'messaging', description: 'Direct and group conversations, messages, polling with since' },
  {
    name: 'introductions',
    description: 'Introduce people to each other; the last acceptance opens their conversation',
  },
  { name: 'contacts', description: 'Contact requests and your contact list' },
];

export interface OpenApiOptions {
  /** The recorded examples (default: the committed ones). */
  examples?: RecordedExamples;
  version?: string;
}

/** Binds a schema's config bounds (the running config's limits). Internal. */
type Bind = <T>(s: T) => T;

/** The success answers of a route, by status, with the recorded examples. Internal. */
function successResponses(r: RouteDef, calls: RecordedCall[], bind: Bind): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, schema] of Object.entries(r.schemas.responses)) {
    const seen = calls.filter((c) => c.status === Number(status));
    responses[status] = {
      description: STATUS_CODES[Number(status)] ?? 'Success',
      headers: headersFor(r, Number(status)),
      content: {
        'application/json': {
          schema: toOpenApi(bind(schema), NAMED, false),
          ...(seen.length ? { examples: examplesMap(seen.map((c) => [c.name, c.response])) } : {}),
        },
      },
    };
  }
  return responses;
}

/** The error codes a route may answer, by status. Internal. */
function errorCodes(r: RouteDef): Map<number, string[]> {
  const codes = new Set<string>(['unauthorized', 'rate_limited', 'internal_error', ...(r.errors ?? [])]);
  // Every route checks its query (unknown fields are 400); POST routes parse a JSON body.
  codes.add('validation_failed');
  if (r.method === 'post') codes.add('invalid_json').add('payload_too_large');
  // Any POST write may carry an Idempotency-Key (API.md "Money"), so it may answer these too.
  if (r.method === 'post' && r.write) codes.add('idempotency_key_reused').add('idempotency_key_in_use');
  // A write is refused while the store cannot write to its disk (reads keep working).
  if (r.write) codes.add('storage_unavailable');
  const byStatus = new Map<number, string[]>();
  for (const code of codes) {
    const status = (ERRORS[code as keyof typeof ERRORS] ?? [400])[0];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return byStatus;
}

/**
 * Adds the error answers of a route to `responses`, a real answer as each code's example where
 * one was recorded. Internal. */
function addErrorResponses(r: RouteDef, calls: RecordedCall[], responses: Record<string, unknown>): void {
  for (const [status, list] of errorCodes(r)) {
    const example = (code: string): [string, unknown] => {
      const real = calls.find(
        (c) => c.status === status && (c.response as { error?: { code?: string } })?.error?.code === code,
      );
      return [code, real ? real.response : catalogueBody(code)];
    };
    responses[String(status)] = {
      description: list.map((code) => `${code}: ${ERRORS[code as keyof typeof ERRORS]?.[1] ?? code}`).join('; '),
      headers: headersFor(r, status),
      content: {
        'application/json': {
          schema: { $ref: '#/components/schemas/Error' },
          examples: examplesMap(list.map(example)),
        },
      },
      // Machine-readable list of the codes behind this status (clients and the fuzz tests read it).
      'x-error-codes': list,
    };
  }
}

/**
 * The header parameters of a route (`Idempotency-Key` on POSTs, `If-None-Match` where it
 * answers ETags) added to `params`, and its 304 answer to `responses`. Internal.
 */
function addHeaderParams(
  r: RouteDef,
  calls: RecordedCall[],
  params: unknown[],
  responses: Record<string, unknown>,
): void {
  if (r.method === 'post') {
    const key = calls.map((c) => c.headers?.['Idempotency-Key']).find((v) => v !== undefined);
    params.push({
      name: 'Idempotency-Key',
      in: 'header' as 'path',
      required: false,
      description:
        'Any 1–255 characters, unique per operation you mean: a retry with the same ' +
        'key, method, path and body gets the first answer back.',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
      ...(key !== undefined ? { example: key } : {}),
    });
  }
  if (!r.etag) return;
  // an extension: conditional reads, so a poll that finds nothing new costs no body
  params.push({
    name: 'If-None-Match',
    in: 'header' as 'path',
    required: false,
    description:
      'The ETag of an earlier answer to this request: 304 Not Modified (no body; ' +
      'counted against the conditional bucket instead of general) if nothing changed. ' +
      '* is answered like any read.',
    schema: { type: 'string', maxLength: 512 },
    example: '"hY4k3cXl0dyqfNHxq7hJ2m1Xc9E"',
  });
  // no body: no media type
  responses['304'] = {
    description:
      'Not Modified: the answer would be the one whose ETag was sent in ' +
      'If-None-Match. No body; counted against the conditional bucket, not general.',
    headers: headersFor(r, 304),
    content: {},
  };
}

/**
 * The request body of a route, with the bodies of recorded successful calls as examples; none
 * for a body without fields. Internal. */
function requestBody(r: RouteDef, calls: RecordedCall[], bind: Bind): unknown {
  // Accept/decline and leave take no body (an empty object is tolerated): none is documented.
  const body = r.schemas.body ? (bind(r.schemas.body) as JsonSchema) : undefined;
  if (!body || !Object.keys((body.properties ?? {}) as object).length) return undefined;
  const sent = calls.filter((c) => c.body !== undefined && c.status < 300);
  return {
    required: true,
    content: {
      'application/json': {
        schema: toOpenApi(body),
        ...(sent.length ? { examples: examplesMap(sent.map((c) => [c.name, c.body])) } : {}),
      },
    },
  };
}

/** The operation of one route. Internal. */
function operation(r: RouteDef, examples: RecordedExamples, bind: Bind): Record<string, unknown> {
  const id = operationId(r);
  const calls = examples.operations[id] ?? [];
  const responses = successResponses(r, calls, bind);
  addErrorResponses(r, calls, responses);
  const params: unknown[] = [
    ...parameters(r, 'path', bind(r.schemas.params), calls),
    ...parameters(r, 'query', bind(r.schemas.query), calls),
  ];
  addHeaderParams(r, calls, params, responses);
  const op: Record<string, unknown> = {
    operationId: id,
    summary: r.summary,
    description: description(r),
    tags: r.tags,
    parameters: params,
    responses,
  };
  const body = requestBody(r, calls, bind);
  if (body) op.requestBody = body;
  if (r.buckets?.length) op['x-rate-limit-buckets'] = ['general', ...r.buckets];
  return op;
}

/** The named schemas of the document, with their recorded examples. Internal. */
function componentSchemas(examples: RecordedExamples, bind: Bind): Record<string, unknown> {
  const schemas: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(sharedSchemas)) {
    const seen = examples.schemas[name];
    schemas[name] = { ...(toOpenApi(bind(s)) as object), ...(seen?.length ? { examples: seen } : {}) };
  }
  for (const [s, name] of NAMED) {
    const seen = examples.schemas[name];
    schemas[name] = { ...(toOpenApi(s) as object), ...(seen?.length ? { examples: seen } : {}) };
  }
  return schemas;
}

/** How a client authenticates (both ways take the same key). Internal. */
const SECURITY_SCHEMES = {
  apiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: 'Your API key (pinbot_…), from `pinbot keys create`.',
  },
  bearer: { type: 'http', scheme: 'bearer', description: 'The same key as Authorization: Bearer pinbot_…' },
};

/**
 * The OpenAPI 3.1 document of /api/v1, built from the same route schemas that validate
 * requests (with the running config's bounds), so it cannot drift from the server; examples
 * are real answers of a recorded run (openapi/examples.json).
 */
export function buildOpenApi(
  routes: readonly RouteDef[],
  config: Config,
  { examples = recordedExamples(), version = '0.1.0' }: OpenApiOptions = {},
): Record<string, unknown> {
  const bind: Bind = (s) => bindConfig(s, config);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = `/api/v1${r.path.replace(/:([A-Za-z_]+)/g, '{$1}')}`;
    (paths[path] ??= {})[r.method] = operation(r, examples, bind);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'pinbot /api/v1',
      version,
      description:
        'Messaging, wallet with UBI, introductions and contacts. Request bodies are ' +
        'limited to 100 kB. See docs/api.md for the conventions (paging, idempotency, ' +
        'rate limits, errors).',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [
      {
        url: '/',
        description:
          'local: the pinbot server that serves this document (a self-hosted twin of the production service)',
        'x-internal': false,
      },
    ],
    security: [{ apiKey: [] }, { bearer: [] }],
    tags: TAGS,
    paths,
    components: {
      schemas: componentSchemas(examples, bind),
      headers: RESPONSE_HEADERS,
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}
