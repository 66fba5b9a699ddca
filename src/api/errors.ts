import { DOMAIN_ERRORS, DomainError, type DomainErrorCode, type ErrorDetail } from '../domain/errors.js';
import { errorBody } from '../util/http.js';

export type { ErrorDetail } from '../domain/errors.js';

/** HTTP status of each domain code. Internal. */
const STATUS: Record<DomainErrorCode, number> = {
  validation_failed: 400,
  invalid_amount: 400,
  insufficient_funds: 400,
  cannot_target_self: 400,
  cannot_leave_direct: 400,
  quota_exceeded: 400,
  forbidden: 403,
  user_not_found: 404,
  transaction_not_found: 404,
  conversation_not_found: 404,
  introduction_not_found: 404,
  contact_request_not_found: 404,
  contact_not_found: 404,
  transaction_not_pending: 409,
  introduction_not_pending: 409,
  contact_request_not_pending: 409,
  already_contacts: 409,
  request_exists: 409,
};

const domainEntries = Object.fromEntries(
  Object.entries(DOMAIN_ERRORS).map(([code, message]) => [code, [STATUS[code as DomainErrorCode], message] as const]),
) as {
  [K in DomainErrorCode]: readonly [number, (typeof DOMAIN_ERRORS)[K]];
};

/**
 * The error catalogue (API.md "Errors"): every code the API answers with and its status. The
 * domain's codes and messages come from `domain/errors.ts`; the HTTP-only ones are here.
 * Handlers throw `new ApiError(code)` (or the domain a DomainError); the error middleware
 * renders `{ error: { code, message, details? } }`.
 */
export const ERRORS = {
  ...domainEntries,
  invalid_json: [400, 'The request body is not valid JSON. Send a JSON object, e.g. {"content": "hi"}.'],
  unauthorized: [401, 'A valid API key is required: send it as X-API-Key: <key> or Authorization: Bearer <key>.'],
  malformed_request: [
    400,
    'The request is not valid HTTP/1.1 (request line, a header or the framing). Check ' +
      'the client or proxy that sent it.',
  ],
  not_found: [404, 'No such route. See GET /openapi.json for the routes this server has.'],
  request_timeout: [
    408,
    'The request took too long to arrive (server.headers_timeout / server.request_timeout). Send it again in one go.',
  ],
  idempotency_key_reused: [
    409,
    'This Idempotency-Key was used for a different request. Use a new key for a new request.',
  ],
  idempotency_key_in_use: [409, 'A request with this Idempotency-Key is still running. Retry after it has finished.'],
  payload_too_large: [413, 'The request body is larger than 100 kB.'],
  rate_limited: [429, 'Too many requests. Wait for Retry-After seconds, then retry.'],
  headers_too_large: [
    431,
    'The request headers are larger than the server accepts (16 kB in all). Send fewer or shorter headers.',
  ],
  internal_error: [500, 'Something went wrong on our side. It has been logged with the request id.'],
  storage_unavailable: [
    503,
    'The server cannot write to its storage right now (a full disk, or an unreachable ' +
      'database); nothing was changed. Retry after Retry-After seconds.',
  ],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof ERRORS;

/** An error with a catalogue code; rendered as the API's error body. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly details?: ErrorDetail[],
    readonly extra?: Record<string, unknown>,
  ) {
    super(message ?? ERRORS[code][1]);
    this.name = 'ApiError';
    this.status = ERRORS[code][0];
  }

  /** The HTTP form of a refusal of the domain (the one place domain codes get a status). */
  static fromDomain(err: DomainError): ApiError {
    return new ApiError(err.code, err.message, err.details);
  }

  /** The response body: `{ error: { code, message, details?, ...extra } }`. */
  toBody(): { error: Record<string, unknown> } {
    return errorBody(this.code, this.message, this.details ? { details: this.details, ...this.extra } : this.extra);
  }
}
