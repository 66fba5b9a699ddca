import type { RouteDef } from '../route.js';

/**
 * The response headers the API sets, as OpenAPI header objects (components/headers). A route
 * names extra ones per status in `responseHeaders` (the hook for `ETag`: add it here and list it
 * on the routes that send it).
 */
export const RESPONSE_HEADERS = {
  'X-Request-Id': {
    description:
      'The id of this request in the server log: your own X-Request-Id if it was 1–64 ' +
      'characters of [A-Za-z0-9_.-], else a new UUID.',
    schema: { type: 'string', maxLength: 64 },
    example: '0b1e3c2a-6f0e-4d7e-9a55-3f1c0a9e2b11',
  },
  RateLimit: {
    description:
      'IETF RateLimit fields (draft 8): one entry per bucket the request counted ' +
      'against; r = requests remaining, t = seconds until the window resets. Absent ' +
      'when the operator turned rate limits off.',
    schema: { type: 'string', maxLength: 512 },
    example: '"general"; r=99; t=60',
  },
  'RateLimit-Policy': {
    description:
      'IETF RateLimit-Policy fields (draft 8): one entry per bucket; q = requests per ' +
      'window, w = window in seconds, pk = partition key.',
    schema: { type: 'string', maxLength: 512 },
    example: '"general"; q=100; w=60; pk=:YzY5MTFiYjViZDY1:',
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying (on a 429 also in error.retry_after).',
    required: true,
    schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 86_400 },
    example: 42,
  },
  'WWW-Authenticate': {
    description: 'How to authenticate: a bearer API key (or X-API-Key).',
    required: true,
    schema: { type: 'string', maxLength: 64 },
    example: 'Bearer realm="pinbot"',
  },
  ETag: {
    description:
      'The entity tag of this answer (a hash of its body: it changes exactly when the ' +
      'body does). Send it back in If-None-Match: 304 if nothing changed (extension).',
    schema: { type: 'string', maxLength: 64 },
    example: '"hY4k3cXl0dyqfNHxq7hJ2m1Xc9E"',
  },
  'Idempotent-Replayed': {
    description:
      'Present (true) when this is the stored answer to an earlier request with the ' +
      'same Idempotency-Key, replayed byte for byte.',
    schema: { type: 'string', enum: ['true'] },
    example: 'true',
  },
} as const;

export type ResponseHeaderName = keyof typeof RESPONSE_HEADERS;

/** References to the headers of `route`'s answers with `status`. Internal. */
export function headersFor(route: RouteDef, status: number): Record<string, { $ref: string }> {
  const names: string[] = ['X-Request-Id'];
  // Every authenticated request counts against `general`; a 401 against `anonymous`.
  if (status < 500) names.push('RateLimit', 'RateLimit-Policy');
  if (status === 429 || status === 503) names.push('Retry-After');
  if (status === 401) names.push('WWW-Authenticate');
  if (route.method === 'post' && route.write && status < 500 && ![401, 413, 429].includes(status))
    names.push('Idempotent-Replayed');
  if (route.etag && (status === 200 || status === 304)) names.push('ETag');
  names.push(...(route.responseHeaders?.[status] ?? []));
  return Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));
}
