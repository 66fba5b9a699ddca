import type { Logger } from 'pino';
import { DomainError } from '../../domain/errors.js';
import { StorageUnavailableError } from '../../store/core/errors.js';
import { retryAfterSeconds } from '../../util/http.js';
import { containsKey } from '../../util/secrets.js';
import { ApiError } from '../errors.js';
import type { Call } from './call.js';

/** Maps domain refusals and what body-parser throws onto the catalogue. Internal. */
export function toApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  if (err instanceof DomainError) return ApiError.fromDomain(err);
  if (err instanceof StorageUnavailableError) return new ApiError('storage_unavailable');
  const e = err as { type?: string; status?: number } | undefined;
  if (e?.type === 'entity.parse.failed') return new ApiError('invalid_json');
  if (e?.type === 'entity.too.large') return new ApiError('payload_too_large');
  if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') {
    return new ApiError('validation_failed', 'The request body must be UTF-8 JSON.');
  }
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
    return new ApiError('validation_failed', 'The request body could not be read; send it again as JSON.');
  }
  return undefined;
}

/**
 * `err` with every detail that names a key-shaped field as `[redacted]` (a key pasted as a
 * field name is not echoed). Internal. */
function redacted(err: ApiError): ApiError {
  if (!err.details?.some((d) => containsKey(d.path))) return err;
  const details = err.details.map((d) => (containsKey(d.path) ? { ...d, path: '[redacted]' } : d));
  return new ApiError(err.code, err.message, details, err.extra);
}

/**
 * The one place an API request ends in an error: renders `err` as the catalogue body
 * (api/errors.ts). Anything that is not a known client error is a bug: logged with the request
 * id (never the key) and answered 500 `internal_error` with no details. An answer already
 * started is cut (the client sees a broken response, never a second one).
 */
export function answerError(call: Call, err: unknown, log: Logger): void {
  let apiError = toApiError(err);
  if (!apiError) {
    log.error({ err, reqId: call.id }, 'internal error');
    apiError = new ApiError('internal_error');
  }
  const res = call.res;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (apiError.code === 'unauthorized') call.setField('WWW-Authenticate', 'Bearer realm="pinbot"');
  if (err instanceof StorageUnavailableError) call.setField('Retry-After', retryAfterSeconds(err.retryAfterMs));
  apiError = redacted(apiError);
  call.sendJson(apiError.status, JSON.stringify(apiError.toBody()));
}
