import { randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The header with which a bot embedded in the server asks for its writes to be answered once
 * committed rather than once durable (docs/bots.md "Exactly once"). It carries the token of the
 * store: only the server's own bots know it, and only a store whose commits become durable in
 * commit order (the file store's journal) has one handed to its bots.
 */
export const COMMIT_ACK_HEADER = 'pinbot-commit-ack';

/** Tokens by store object: made at first use, never written anywhere. Internal. */
const tokens = new WeakMap<object, string>();

/**
 * The secret token of `store` (random, per process and store object).
 *
 * @example headers[COMMIT_ACK_HEADER] === commitAckToken(store)
 */
export function commitAckToken(store: object): string {
  let token = tokens.get(store);
  if (token === undefined) tokens.set(store, (token = randomBytes(18).toString('base64url')));
  return token;
}

/** Whether a request's COMMIT_ACK_HEADER value is the token of `store` (compared in constant time). */
export function isCommitAck(store: object, value: string | string[] | undefined): boolean {
  if (typeof value !== 'string') return false;
  const token = tokens.get(store);
  if (token === undefined || value.length !== token.length) return false;
  return timingSafeEqual(Buffer.from(value), Buffer.from(token));
}

/**
 * Runs a transaction through `run`, resolved once it has committed rather than once durable,
 * when the store commits at once (the file store runs `fn` before `run` returns). A store that
 * commits later (PostgreSQL), or a transaction refused or thrown, gives `run`'s own promise. A
 * commit the disk then refuses is taken back with everything after it; the store reports it.
 * The API answers its own bots with it, and a bot's run writes its state with it.
 *
 * @example await onceCommitted((fn) => store.transaction(fn), (tx) => write(tx));
 */
export function onceCommitted<T, R>(run: (fn: (tx: T) => R) => Promise<R>, fn: (tx: T) => R): Promise<R> {
  let done: { result: R } | undefined;
  const durable = run((tx) => {
    const result = fn(tx);
    done = { result };
    return result;
  });
  if (done === undefined) return durable;
  durable.catch(() => undefined);
  return Promise.resolve((done as { result: R }).result);
}
