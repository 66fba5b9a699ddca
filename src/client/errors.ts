import type { ErrorBody } from './types.js';

/**
 * An error answer of the API (status ≥ 400), with the catalogue code and message of its body.
 *
 * @example
 * try { await client.wallet.send({ recipient_pin: 'ABC123', amount: 5 }); }
 * catch (err) { if (err instanceof ApiRequestError && err.code === 'insufficient_funds') … }
 */
export class ApiRequestError extends Error {
  readonly code: string;
  readonly details?: ErrorBody['error']['details'];
  /** Seconds, from `Retry-After` (429). */
  readonly retryAfter?: number;

  constructor(
    readonly status: number,
    body: ErrorBody | undefined,
    readonly method: string,
    readonly path: string,
    readonly requestId?: string,
    retryAfter?: number,
  ) {
    const code = body?.error?.code ?? `http_${status}`;
    super(`${method} ${path} → ${status} ${code}: ${body?.error?.message ?? 'no error body'}`);
    this.name = 'ApiRequestError';
    this.code = code;
    this.details = body?.error?.details;
    this.retryAfter = retryAfter ?? body?.error?.retry_after;
  }
}

/**
 * 401: the key is missing, unknown or revoked. Retrying cannot help; a bot that gets it stops
 * and says so.
 */
export class UnauthorizedError extends ApiRequestError {
  constructor(...args: ConstructorParameters<typeof ApiRequestError>) {
    super(...args);
    this.name = 'UnauthorizedError';
  }
}

/** The server could not be reached, or kept failing (5xx, 429) after every retry. */
export class TransientError extends Error {
  constructor(
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'TransientError';
  }
}

/**
 * True for failures worth trying again later (network, timeouts, 5xx, 429, 409
 * `idempotency_key_in_use`); false for answers that will not change (400, 403, 404, other 409).
 */
export function isTransient(err: unknown): boolean {
  if (err instanceof TransientError) return true;
  if (err instanceof ApiRequestError)
    return err.status >= 500 || err.status === 429 || err.code === 'idempotency_key_in_use';
  return false;
}
