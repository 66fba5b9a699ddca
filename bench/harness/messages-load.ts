import type { MessagesMeta } from '../data/messages.js';
import type { LoadRequest } from './load.js';

/** A message body of about 100 bytes, as a chat message tends to be. */
export const MESSAGE_BODY = JSON.stringify({
  content: 'Load test message: lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod.',
});

/**
 * Connection i posts as user 2i into direct conversation i (its own conversation, so the
 * connections do not queue behind one conversation), for `connections` connections.
 */
export function postMessages(meta: MessagesMeta, connections: number): LoadRequest[] {
  const n = Math.min(connections, meta.direct.length);
  return Array.from({ length: n }, (_, i) => ({
    method: 'POST' as const,
    path: `/api/v1/conversations/${meta.direct[i]}/messages`,
    headers: { 'X-API-Key': meta.users[2 * i]!.key, 'Content-Type': 'application/json' },
    body: MESSAGE_BODY,
  }));
}

/** Connection i authenticates as participant i of the big conversation and GETs `path(i)`. */
export function asBigParticipants(meta: MessagesMeta, connections: number, path: string): LoadRequest[] {
  const ps = meta.big.participants;
  return Array.from({ length: Math.min(connections, ps.length) }, (_, i) => ({
    method: 'GET' as const,
    path,
    headers: { 'X-API-Key': meta.users[ps[i]!]!.key },
  }));
}

/** The two sizes of the messages data set the write and poll benches use. */
export const SMALL_STORE = { messages: 1_000, big: 100, users: 200, pollNew: 10 };
export const LARGE_STORE = { messages: 1_000_000, big: 100_000, users: 200, pollNew: 10 };
