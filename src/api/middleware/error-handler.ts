import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { DomainError } from '../../domain/errors.js';
import { StorageUnavailableError } from '../../store/core/errors.js';
import { containsKey } from '../../util/secrets.js';
import { ApiError } from '../errors.js';

/**
 * Sends a JSON body that is already a string (so replays are byte for byte). Internal.
 * Written straight to node's response: express's `send` would re-parse the content type twice
 * and check freshness for an ETag we never set, measurable on every read (bench/read).
 */
export function sendJson(res: Response, status: number, body: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/** A Retry-After value: whole seconds, at least 1. Internal. */
export function retryAfterSeconds(ms: number): string {
  return String(Math.max(1, Math.ceil(ms / 1000)));
}

/** Maps domain refusals and what body-parser and express throw onto the catalogue. Internal. */
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
 * The last middleware: renders every failure as the catalogue body. Anything that is not a
 * known client error is a bug: logged with the request id (never the key) and answered 500
 * `internal_error` with no details.
 */
export function errorHandler() {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    let apiError = toApiError(err);
    if (!apiError) {
      const log = (req as Request & { log?: Logger }).log;
      log?.error({ err, reqId: (req as Request & { id?: unknown }).id }, 'internal error');
      apiError = new ApiError('internal_error');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (apiError.code === 'unauthorized') res.setHeader('WWW-Authenticate', 'Bearer realm="pinbot"');
    if (err instanceof StorageUnavailableError) res.setHeader('Retry-After', retryAfterSeconds(err.retryAfterMs));
    // A detail names the field as sent: a key pasted as a field name is not echoed back.
    if (apiError.details?.some((d) => containsKey(d.path))) {
      apiError = new ApiError(
        apiError.code,
        apiError.message,
        apiError.details.map((d) => (containsKey(d.path) ? { ...d, path: '[redacted]' } : d)),
        apiError.extra,
      );
    }
    sendJson(res, apiError.status, JSON.stringify(apiError.toBody()));
  };
}
