/**
 * The error catalogue (API.md "Errors"): every code the API answers with, its status and a
 * message that says what to do next. Handlers throw `new ApiError(code)`; the error middleware
 * renders `{ error: { code, message, details? } }`.
 */
export const ERRORS = {
  invalid_json: [400, 'The request body is not valid JSON. Send a JSON object, e.g. {"content": "hi"}.'],
  validation_failed: [400, 'The request does not match the schema of this endpoint; see details for each field.'],
  invalid_amount: [400, 'amount must be a number greater than 0 with at most 2 decimal places, and no more than the maximum transfer.'],
  insufficient_funds: [400, 'Your balance is lower than the amount. Check GET /api/v1/wallet/balance.'],
  cannot_target_self: [400, 'You cannot target your own PIN here. Use the PIN of another user.'],
  unauthorized: [401, 'A valid API key is required: send it as X-API-Key: <key> or Authorization: Bearer <key>.'],
  forbidden: [403, 'You are a party to this resource but may not perform this action on it.'],
  not_found: [404, 'No such route. See GET /openapi.json for the routes this server has.'],
  user_not_found: [404, 'No user has this PIN. Check the PIN (6 characters, A-Z and 0-9).'],
  transaction_not_found: [404, 'No transaction with this id is visible to you.'],
  conversation_not_found: [404, 'No conversation with this id is visible to you.'],
  introduction_not_found: [404, 'No introduction with this id is visible to you.'],
  contact_request_not_found: [404, 'No contact request with this id is addressed to you.'],
  contact_not_found: [404, 'No contact with this id is in your contact list.'],
  transaction_not_pending: [409, 'This transaction is no longer pending: it was already accepted or declined.'],
  introduction_not_pending: [409, 'This introduction is no longer pending for you: it was already answered or has ended.'],
  contact_request_not_pending: [409, 'This contact request is no longer pending.'],
  already_contacts: [409, 'You are already contacts with this user.'],
  request_exists: [409, 'You already sent a contact request to this user; wait for their answer.'],
  idempotency_key_reused: [409, 'This Idempotency-Key was used for a different request. Use a new key for a new request.'],
  idempotency_key_in_use: [409, 'A request with this Idempotency-Key is still running. Retry after it has finished.'],
  payload_too_large: [413, 'The request body is larger than 100 kB.'],
  rate_limited: [429, 'Too many requests. Wait for Retry-After seconds, then retry.'],
  internal_error: [500, 'Something went wrong on our side. It has been logged with the request id.'],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof ERRORS;

export interface ErrorDetail {
  path: string;
  message: string;
}

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

  /** The response body: `{ error: { code, message, details?, ...extra } }`. */
  toBody(): { error: Record<string, unknown> } {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details ? { details: this.details } : {}),
        ...(this.extra ?? {}),
      },
    };
  }
}
