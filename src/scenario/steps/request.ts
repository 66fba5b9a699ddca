import { checkMatchers, formatMismatches, matchValue, type Mismatch } from '../match.js';
import { checkSchema, checkSchemaRefs } from '../openapi-schemas.js';
import { curlLine, send, type SentRequest } from '../http.js';
import { readPath, checkSavePath } from '../save-path.js';
import { StepFailure, type StepKind } from '../types.js';

/** `METHOD /path`, the request line of a step. */
export const REQUEST_LINE = '^\\s*(GET|POST|PUT|PATCH|DELETE|HEAD)\\s+\\S.*$';

interface RequestStep {
  request: string;
  as?: string;
  body?: unknown;
  raw?: string;
  query?: Record<string, unknown>;
  headers?: Record<string, string>;
  expect?: {
    status?: unknown;
    headers?: Record<string, unknown>;
    body?: unknown;
    strict?: boolean;
    schema?: Record<string, unknown>;
  };
  save?: Record<string, string>;
}

/** Paths under /api/v1 may be written short (`/wallet/balance`); /healthz and /openapi.json are not under it. */
function fullPath(path: string): string {
  return /^\/(api\/|healthz\b|openapi\.json\b)/.test(path) ? path : `/api/v1${path}`;
}

export const requestStep: StepKind<RequestStep> = {
  name: 'request',
  description:
    'an HTTP request as a user (`as:`), checked with `expect` (status, headers, body ' +
    'by partial deep match with matchers, JSON Schema) and captured with `save`',
  schema: {
    properties: {
      request: {
        type: 'string',
        pattern: REQUEST_LINE,
        description:
          '"METHOD /path", e.g. "GET /wallet/balance" (paths are under /api/v1 unless ' +
          'they start with /api/, /healthz or /openapi.json)',
      },
      as: {
        type: 'string',
        minLength: 1,
        description: 'the user making the request (their API key is sent); without it the request is anonymous',
      },
      body: { description: 'JSON body (templates allowed)' },
      raw: { type: 'string', description: 'a body sent as is, as application/json (for invalid JSON)' },
      query: {
        type: 'object',
        description: 'query parameters',
        additionalProperties: { type: ['string', 'number', 'boolean'] },
      },
      headers: {
        type: 'object',
        description: 'extra request headers',
        additionalProperties: { type: ['string', 'number'] },
      },
      expect: {
        type: 'object',
        additionalProperties: false,
        description: 'what the answer must be (default: a status below 400)',
        properties: {
          status: { description: 'a status, a list of statuses, or a matcher ({ min: 400, max: 499 })' },
          headers: { type: 'object', description: 'header names (any case) → value or matcher' },
          body: {
            description: 'partial deep match: listed keys must match, others are ignored; values may be matchers',
          },
          strict: { type: 'boolean', description: 'the body must match exactly: no other keys, same lengths' },
          schema: {
            type: 'object',
            description:
              "a JSON Schema the body must be valid against; $ref into the API's " +
              'OpenAPI document ("#/components/schemas/User") or { response: "GET ' +
              '/wallet/balance" }',
          },
        },
      },
      save: {
        type: 'object',
        description: 'captures: name → path in the body (transaction.id, items[0].id), or $status, $headers.NAME',
        additionalProperties: { type: 'string' },
      },
    },
    required: ['request'],
  },
  label: (s) => `${s.as ?? 'anonymous'} ${s.request.trim()}`,
  check(s, c) {
    if (s.as !== undefined) c.user(s.as, ['as']);
    if (s.body !== undefined && s.raw !== undefined)
      c.problem(['raw'], 'a step has body or raw, not both', 'remove one');
    for (const k of ['request', 'body', 'raw', 'query', 'headers', 'expect'] as const)
      if (s[k] !== undefined) c.templates(s[k], [k]);
    for (const p of checkMatchers(s.expect?.body, ['expect', 'body'])) c.problem(p.path, p.message);
    for (const p of checkMatchers(s.expect?.headers, ['expect', 'headers'])) c.problem(p.path, p.message);
    for (const p of checkMatchers(s.expect?.status, ['expect', 'status'])) c.problem(p.path, p.message);
    if (s.expect?.schema)
      for (const p of checkSchemaRefs(s.expect.schema)) c.problem(['expect', 'schema', ...p.path], p.message, p.hint);
    findSchemas(s.expect?.body, ['expect', 'body'], (schema, path) =>
      checkSchemaRefs(schema).forEach((p) => c.problem([...path, ...p.path], p.message, p.hint)),
    );
    for (const [name, path] of Object.entries(s.save ?? {})) {
      const bad = checkSavePath(path);
      if (bad) c.problem(['save', name], bad);
      c.declare(name);
    }
  },
  async run(s, ctx) {
    const line = String(ctx.render(s.request)).trim();
    const [method, pathText] = [line.split(/\s+/)[0]!.toUpperCase(), line.split(/\s+/).slice(1).join(' ')];
    const userName = s.as === undefined ? undefined : String(ctx.render(s.as));
    const user = userName === undefined ? undefined : ctx.target.users[userName];
    if (userName !== undefined && !user) throw new StepFailure(`no user "${userName}" in this scenario`);
    const url = new URL(fullPath(pathText), ctx.target.baseUrl);
    for (const [k, v] of Object.entries(ctx.render<Record<string, unknown>>(s.query ?? {})))
      url.searchParams.set(k, String(v));
    const headers: Record<string, string> = {};
    if (user) headers['X-API-Key'] = user.api_key;
    let body: string | undefined;
    if (s.body !== undefined) body = JSON.stringify(ctx.render(s.body));
    if (s.raw !== undefined) body = String(ctx.render(s.raw));
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    for (const [k, v] of Object.entries(ctx.render<Record<string, unknown>>(s.headers ?? {}))) headers[k] = String(v);
    const req: SentRequest = { method, url: url.toString(), headers, body };
    const keys = Object.fromEntries(Object.values(ctx.target.users).map((u) => [u.name, u.api_key]));
    const curl = () => curlLine(req, keys);
    let answer;
    try {
      answer = await send(req);
    } catch (err) {
      throw new StepFailure((err as Error).message, { curl: curl() });
    }
    await ctx.target.settle();
    const out: Mismatch[] = [];
    const expect = s.expect ? ctx.render<NonNullable<RequestStep['expect']>>(s.expect) : {};
    if (expect.status === undefined) {
      if (answer.status >= 400)
        out.push({ path: 'status', expected: 'below 400 (no expect.status given)', actual: answer.status });
    } else if (Array.isArray(expect.status)) {
      if (!expect.status.includes(answer.status))
        out.push({ path: 'status', expected: `one of ${JSON.stringify(expect.status)}`, actual: answer.status });
    } else matchValue(expect.status, answer.status, 'status', out);
    if (expect.headers) {
      const want = Object.fromEntries(Object.entries(expect.headers).map(([k, v]) => [k.toLowerCase(), v]));
      matchValue(want, answer.headers, 'headers', out);
    }
    const schema = (sch: unknown, v: unknown) => checkSchema(sch, v, ctx.config);
    if (expect.body !== undefined)
      matchValue(expect.body, answer.body, 'body', out, { strict: expect.strict === true, schema });
    if (expect.schema)
      for (const line of schema(expect.schema, answer.body))
        out.push({ path: 'body', expected: `valid against the schema: ${line}`, actual: answer.body });
    if (out.length) {
      const got =
        answer.status >= 400 && answer.body && typeof answer.body === 'object'
          ? ` (${JSON.stringify((answer.body as { error?: { code?: string } }).error?.code ?? '')})`
          : '';
      throw new StepFailure(
        `${method} ${pathText} answered ${answer.status}${got}; ${out.length} ` +
          `expectation${out.length > 1 ? 's' : ''} failed`,
        { diff: formatMismatches(out, ctx.mask), curl: curl() },
      );
    }
    for (const [name, path] of Object.entries(s.save ?? {})) {
      const v = readPath(answer, path);
      if (v === undefined)
        throw new StepFailure(`save ${name}: ${path} is missing in the answer`, {
          diff: `  answer body: ${ctx.mask(JSON.stringify(answer.body)).slice(0, 400)}`,
          curl: curl(),
        });
      ctx.capture(name, v);
    }
    return { detail: `${answer.status}` };
  },
};

/** Calls `fn` for every `$schema` matcher inside an expected body. Internal. */
function findSchemas(
  v: unknown,
  path: Array<string | number>,
  fn: (schema: unknown, path: Array<string | number>) => void,
): void {
  if (Array.isArray(v)) return v.forEach((x, i) => findSchemas(x, [...path, i], fn));
  if (!v || typeof v !== 'object') return;
  for (const [k, x] of Object.entries(v)) {
    if (k === '$schema') fn(x, [...path, k]);
    else findSchemas(x, [...path, k], fn);
  }
}
