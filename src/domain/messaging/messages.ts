import { byteSize, chargeUsage, refundUsage } from '../quotas.js';
import { DomainError } from '../errors.js';
import type { ReadView, Tx } from '../../store/core/types.js';
import { newId } from '../../util/ids.js';
import { iso } from '../../clock/clock.js';
import type { DomainEnv } from '../env.js';
import { publicUser, userById, type PublicUser } from '../users/users.js';
import { ConversationActivity, Messages, type ConversationRecord, type MessageRecord } from './collections.js';

/** The message object of every response (API.md "Messaging"). */
export interface MessageView {
  id: string;
  conversation_id: string;
  content: string;
  sender: PublicUser;
  timestamp: number;
  created_at: string;
}

/**
 * Renders a stored message; `created_at` is its timestamp as ISO 8601.
 *
 * @example toMessage(db, m).sender.pin_code
 */
export function toMessage(db: ReadView, m: MessageRecord): MessageView {
  return {
    id: m.id,
    conversation_id: m.conversation_id,
    content: m.content,
    sender: publicUser(userById(db, m.sender_id)),
    timestamp: m.timestamp,
    created_at: iso(m.timestamp),
  };
}

/**
 * Checks message content: non-empty after trimming, at most `messaging.max_length` Unicode code
 * points. Throws 400 `validation_failed` naming `path`.
 *
 * @example checkContent(env, body.content, 'body.content');
 */
export function checkContent(env: DomainEnv, content: string, path = 'body.content'): void {
  if (content.trim().length === 0) {
    throw new DomainError('validation_failed', undefined, [
      { path, message: 'must contain something besides whitespace' },
    ]);
  }
  const max = env.config.messaging.max_length;
  // A string has no more code points than UTF-16 units: only a longer one needs counting.
  if (content.length <= max) return;
  let length = 0;
  for (const _ of content) length++; // code points, not UTF-16 units
  if (length > max) {
    throw new DomainError('validation_failed', undefined, [
      { path, message: `must be at most ${max} characters (messaging.max_length); it has ${length}` },
    ]);
  }
}

/**
 * Appends a message to a conversation the sender is in. Its timestamp is
 * `max(now, last + 1)`: strictly increasing within the conversation even when the clock stands
 * still or steps back, so `since` polling never misses or repeats a message.
 *
 * @example const m = postMessage(tx, env, conv, alice.id, 'hello');
 */
export function postMessage(
  tx: Tx,
  env: DomainEnv,
  conv: ConversationRecord,
  senderId: string,
  content: string,
): MessageRecord {
  const activity = tx.col(ConversationActivity).get(conv.id)!;
  const timestamp = Math.max(env.clock.now(), activity.last_timestamp + 1);
  let id = newId('msg');
  // Ids are monotonic within a process; this guard keeps the index in timestamp order regardless.
  while (activity.last_message_id !== null && id <= activity.last_message_id) id = newId('msg');
  chargeUsage(tx, env, senderId, byteSize(content), 'body.content');
  const messages = tx.col(Messages);
  const message = messages.insert({ id, conversation_id: conv.id, sender_id: senderId, content, timestamp });
  tx.col(ConversationActivity).update(conv.id, {
    last_message_id: id,
    last_timestamp: timestamp,
    activity_at: Math.max(activity.activity_at, timestamp),
  });
  // a conversation keeps its newest quotas.messages_per_conversation: the oldest leaves (its
  // sender's bytes given back); ids are in timestamp order, so `since` polling is unchanged
  const ids = messages.ids('conversation', conv.id);
  for (let i = 0; ids.length - i > env.config.quotas.messages_per_conversation; i++) {
    const oldest = messages.get(ids[i]!)!;
    messages.delete(oldest.id);
    refundUsage(tx, oldest.sender_id, byteSize(oldest.content));
  }
  return message;
}

export interface MessagePageView {
  messages: MessageView[];
  timestamp: number;
  has_more: boolean;
}

/**
 * A page of a conversation's messages, oldest first (API.md): with `since`, those with
 * `timestamp > since` (binary search on the conversation's index), at most `limit`, `has_more`
 * when newer ones remain; without it, the newest `limit`, `has_more` when older ones remain.
 * `timestamp` is that of the last message returned, else `since`, else 0.
 */
export function listMessages(
  db: ReadView,
  conversationId: string,
  opts: { since?: number; limit: number },
): MessagePageView {
  const coll = db.col(Messages);
  const ids = coll.ids('conversation', conversationId);
  let start: number;
  let end: number;
  let hasMore: boolean;
  if (opts.since === undefined) {
    end = ids.length;
    start = Math.max(0, end - opts.limit);
    hasMore = start > 0;
  } else {
    const since = opts.since;
    let lo = 0;
    let hi = ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (coll.get(ids[mid]!)!.timestamp <= since) lo = mid + 1;
      else hi = mid;
    }
    start = lo;
    end = Math.min(ids.length, start + opts.limit);
    hasMore = end < ids.length;
  }
  const messages: MessageView[] = [];
  for (let i = start; i < end; i++) messages.push(toMessage(db, coll.get(ids[i]!)!));
  const last = messages[messages.length - 1];
  return { messages, timestamp: last ? last.timestamp : (opts.since ?? 0), has_more: hasMore };
}
