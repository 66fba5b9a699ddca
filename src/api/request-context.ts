import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The API key (its id) a request is made with, for the work that request does: the embedded
 * server tells the bots a change concerns which key made it, so a bot is not woken by its own
 * replies.
 *
 * @example requestKey.getStore() // 'key_01h…' inside a request, undefined elsewhere
 */
export const requestKey = new AsyncLocalStorage<string>();
