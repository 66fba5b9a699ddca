import type { WireResponse } from './http.js';
import { errorBodyValidator, successValidator, type Operation } from './openapi-ops.js';

/**
 * What is wrong with a response, judged only by what /openapi.json promises for the operation
 * (API.md "Errors"): a JSON body; a documented status; a success body that validates against the
 * route's response schema; an error body of the catalogue shape with a code documented for that
 * status; `WWW-Authenticate` on 401 and `Retry-After` on 429. An empty list means it keeps its
 * promises. 5xx are reported by the caller, not here.
 *
 * @example
 * const problems = responseProblems(op, res, true);
 */
export function responseProblems(
  op: Operation,
  res: WireResponse,
  routable: boolean,
  method = op.method.toUpperCase(),
): string[] {
  const out: string[] = [];
  const ct = String(res.headers['content-type'] ?? '');
  // HEAD is GET without a body (express answers it for every GET route).
  if (method === 'HEAD') return [];
  if (!/^application\/json\b/.test(ct)) out.push(`content-type is ${JSON.stringify(ct)}, not application/json`);
  if (res.json === undefined) {
    out.push(`body is not JSON: ${res.text.slice(0, 120)}`);
    return out;
  }
  if (res.status >= 500) return out;
  const code = (res.json as { error?: { code?: unknown } })?.error?.code;
  if (!routable) {
    // Bodies are parsed before routing, so a bad body on an unknown route may be a 400/413 first.
    const early = ['unauthorized', 'rate_limited', 'validation_failed', 'invalid_json', 'payload_too_large'];
    const ok =
      (res.status === 404 && code === 'not_found') || (early.includes(String(code)) && errorBodyValidator()(res.json));
    if (!ok) out.push(`a request no route matches answered ${res.status} ${String(code)}, not 404 not_found`);
    return out;
  }
  if (res.status < 400) {
    if (!op.statuses.has(res.status)) out.push(`status ${res.status} is not documented`);
    const validate = successValidator(op.route, res.status);
    if (validate && !validate(res.json)) {
      out.push(
        `${res.status} body breaks its schema: ` +
          `${validate.errors?.map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ')}`,
      );
    }
    return out;
  }
  const validate = errorBodyValidator();
  if (!validate(res.json)) out.push(`error body breaks the Error schema: ${res.text.slice(0, 160)}`);
  const documented = op.errorCodes.get(res.status);
  if (!documented) out.push(`status ${res.status} (${String(code)}) is not documented`);
  else if (typeof code !== 'string' || !documented.has(code))
    out.push(`code ${String(code)} is not documented for ${res.status} (documented: ${[...documented].join(', ')})`);
  if (res.status === 401 && !res.headers['www-authenticate']) out.push('401 without WWW-Authenticate');
  if (res.status === 429 && !res.headers['retry-after']) out.push('429 without Retry-After');
  return out;
}
