/**
 * The pinbot package for TypeScript users: the typed API client and its types.
 *
 * @example
 * import { createClient } from 'pinbot';
 * const api = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: process.env.PINBOT_KEY! });
 * console.log(await api.me());
 */
export { createClient, type Client, type ClientOptions, type ReadOptions } from './client/client.js';
export { ApiRequestError, UnauthorizedError, TransientError, isTransient } from './client/errors.js';
export { createRateBudget, type RateBudget, type RateBudgetOptions, type RequestKind } from './client/rate-budget.js';
export type { RetryOptions } from './client/http.js';
export type { RawRequest, RawResponse, Transport } from './client/transport.js';
export type * from './client/types.js';
