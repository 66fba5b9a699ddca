import type { ValidateFunction } from 'ajv';
import type { JsonSchema, RouteDef } from '../../src/api/route.js';
import { compileResponse } from '../../src/api/validation.js';

/** The parts of an OpenAPI 3.1 document the harness reads. */
export interface OpenApiDoc {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, JsonSchema> };
  info?: { description?: string };
}

interface OpenApiOperation {
  operationId: string;
  parameters?: Array<{ name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema: JsonSchema }>;
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, { content?: Record<string, { schema: JsonSchema }>; 'x-error-codes'?: string[] }>;
}

export interface Param {
  name: string;
  required: boolean;
  schema: JsonSchema;
}

/** One operation of the document, joined with the route that serves it. */
export interface Operation {
  id: string;
  method: 'get' | 'post' | 'delete';
  /** OpenAPI path, e.g. `/api/v1/wallet/transactions/{id}/accept`. */
  path: string;
  pathParams: Param[];
  queryParams: Param[];
  headerParams: Param[];
  /** Body schema as the document has it (refs to `#/components/schemas/…`). */
  body?: JsonSchema;
  /** Documented statuses. */
  statuses: Set<number>;
  /** Documented error codes by status. */
  errorCodes: Map<number, Set<string>>;
  /** The route of the table that serves it (its schemas compile with the API's ajv). */
  route: RouteDef;
}

/** `/api/v1/x/{id}` for a route path `/x/:id`. */
export function openApiPath(routePath: string): string {
  return `/api/v1${routePath.replace(/:([A-Za-z_]+)/g, '{$1}')}`;
}

/**
 * Every operation of `doc`, each joined with its route. Throws when the document and the table
 * disagree (an operation without a route or a route without an operation): the harness must
 * cover exactly what the server serves.
 *
 * @example
 * const ops = operations(await (await fetch(`${url}/openapi.json`)).json(), allRoutes);
 */
export function operations(doc: OpenApiDoc, routes: readonly RouteDef[]): Operation[] {
  const byKey = new Map(routes.map((r) => [`${r.method} ${openApiPath(r.path)}`, r]));
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const route = byKey.get(`${method} ${path}`);
      if (!route) throw new Error(`${method.toUpperCase()} ${path} is in /openapi.json but not in the route table`);
      byKey.delete(`${method} ${path}`);
      const params = op.parameters ?? [];
      const pick = (where: string) =>
        params.filter((p) => p.in === where).map((p) => ({ name: p.name, required: !!p.required, schema: p.schema }));
      const errorCodes = new Map<number, Set<string>>();
      for (const [status, r] of Object.entries(op.responses))
        if (r['x-error-codes']) errorCodes.set(Number(status), new Set(r['x-error-codes']));
      out.push({
        id: op.operationId,
        method: method as Operation['method'],
        path,
        pathParams: pick('path'),
        queryParams: pick('query'),
        headerParams: pick('header'),
        body: op.requestBody?.content['application/json']?.schema,
        statuses: new Set(Object.keys(op.responses).map(Number)),
        errorCodes,
        route,
      });
    }
  }
  const missing = [...byKey.keys()];
  if (missing.length) throw new Error(`routes missing from /openapi.json: ${missing.join(', ')}`);
  return out;
}

/** The name of a `#/components/schemas/Name` reference, if `schema` is one. */
export function refName(schema: JsonSchema | undefined): string | undefined {
  const ref = schema?.$ref;
  return typeof ref === 'string' ? ref.replace(/^#\/components\/schemas\//, '') : undefined;
}

/** Follows `$ref`s to the schema they name. */
export function deref(doc: OpenApiDoc, schema: JsonSchema): JsonSchema {
  let s = schema;
  for (let i = 0; i < 20 && typeof s.$ref === 'string'; i++) {
    const target = doc.components.schemas[refName(s)!];
    if (!target) throw new Error(`unresolved $ref ${String(s.$ref)}`);
    s = target;
  }
  return s;
}

const compiled = new WeakMap<JsonSchema, ValidateFunction>();

/** The validator of a route's success response for `status` (compiled once, with the API's ajv). */
export function successValidator(route: RouteDef, status: number): ValidateFunction | undefined {
  const schema = route.schemas.responses[status];
  if (!schema) return undefined;
  let fn = compiled.get(schema);
  if (!fn) compiled.set(schema, (fn = compileResponse(schema)));
  return fn;
}

let errorValidator: ValidateFunction | undefined;

/** The validator of the error body (`{ $ref: 'Error' }`). */
export function errorBodyValidator(): ValidateFunction {
  return (errorValidator ??= compileResponse({ $ref: 'Error' }));
}

/**
 * The operation that serves `method path` the way express routes it: path params match one
 * non-empty segment, a single trailing slash is ignored (non-strict routing, so
 * `/conversations/` is `GET /conversations`), HEAD is served by GET. Undefined: no route.
 */
export function matchOperation(ops: readonly Operation[], method: string, pathAndQuery: string): Operation | undefined {
  const path = pathAndQuery.split('?')[0]!.replace(/(.)\/$/, '$1');
  const m = method === 'HEAD' ? 'GET' : method;
  return ops.find(
    (o) => o.method.toUpperCase() === m && new RegExp(`^${o.path.replace(/\{[A-Za-z_]+\}/g, '[^/]+')}$`).test(path),
  );
}

/** Fills `{name}` segments of an OpenAPI path (values are URL-encoded). */
export function fillPath(
  path: string,
  params: Record<string, string>,
  encode: (s: string) => string = encodeURIComponent,
): string {
  return path.replace(/\{([A-Za-z_]+)\}/g, (_m, name: string) => encode(params[name] ?? ''));
}
