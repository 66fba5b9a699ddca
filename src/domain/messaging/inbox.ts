import { DomainError } from '../errors.js';
import type { ReadView } from '../../store/core/types.js';
import type { User } from '../users/users.js';
import { ConversationActivity, Conversations, Messages, type MessageRecord } from './collections.js';
import { toConversation, type ConversationView } from './conversations.js';
import { toMessage, type MessageView } from './messages.js';

/**
 * A page of `GET /messages` (extension): new messages across every conversation of the caller,
 * in the order they were written, with the conversations they are in.
 */
export interface InboxPageView {
  messages: MessageView[];
  /** The conversations of `messages`, each once (in the order their first message comes). */
  conversations: ConversationView[];
  /** Pass as `after` next time: only messages written after this page come then. */
  next_after: string;
  has_more: boolean;
}

/** Where a read of the inbox stands: messages with `timestamp > since` and an id above `afterId`. Internal. */
interface InboxCursor {
  since: number;
  afterId: string;
}

/** The opaque cursor `<since>.<message id or nothing>`; the id part empty: from the first message. */
const CURSOR = /^(\d{1,16})\.((?:msg_[0-9a-z]{1,40})?)$/;

/** `after` as a cursor; 400 `validation_failed` naming `query.after` when it is not one. Internal. */
function parseAfter(after: string): InboxCursor {
  const m = CURSOR.exec(after);
  if (!m)
    throw new DomainError('validation_failed', undefined, [
      { path: 'query.after', message: 'must be the next_after of a previous answer (treat it as opaque)' },
    ]);
  return { since: Number(m[1]), afterId: m[2]! };
}

/**
 * The caller's new messages across their conversations (`GET /messages`, an extension): those
 * with `timestamp > since` written after the cursor `after`, oldest first in the order they
 * were written, at most `limit`. Message ids sort in commit order (one process makes them in
 * order; a PostgreSQL process commits only on the latest state and makes later ids than any it
 * has seen), so a client that always passes the `next_after` it was given never misses and never
 * repeats a message, across conversations. The cost is one look at each of the caller's
 * conversations (its activity record) and a binary search in those with something new.
 *
 * `next_after` keeps `since` only while a message it left out could still be returned by the id
 * alone (a clock set back makes such messages); once a read has nothing more to give, the next
 * one is by id only.
 *
 * @example listInbox(db, bot, { since: startedAt, limit: 200 }).next_after
 */
export function listInbox(
  db: ReadView,
  user: User,
  opts: { since?: number; after?: string; limit: number },
): InboxPageView {
  if (opts.since !== undefined && opts.after !== undefined)
    throw new DomainError('validation_failed', undefined, [
      { path: 'query.since', message: 'give since (the first read) or after (the next ones), not both' },
    ]);
  const cursor = opts.after !== undefined ? parseAfter(opts.after) : { since: opts.since ?? 0, afterId: '' };
  const { found, leftOut } = newMessages(db, user, cursor, opts.limit + 1);
  found.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const hasMore = found.length > opts.limit;
  const page = hasMore ? found.slice(0, opts.limit) : found;
  let lastId = page.length ? page[page.length - 1]!.id : cursor.afterId;
  // Without more to come, the cursor moves past what `since` left out too (those stay out: their
  // timestamps do not change) and needs `since` no more: what comes after it is new. With more,
  // `since` stays while a message it left out lies beyond where the next read starts.
  let keepSince = false;
  if (!hasMore) for (const id of leftOut) lastId = id > lastId ? id : lastId;
  else keepSince = leftOut.some((id) => id > lastId);
  const convs = db.col(Conversations);
  const conversations: ConversationView[] = [];
  const seen = new Set<string>();
  for (const m of page) {
    if (seen.has(m.conversation_id)) continue;
    seen.add(m.conversation_id);
    conversations.push(toConversation(db, convs.get(m.conversation_id)!));
  }
  return {
    messages: page.map((m) => toMessage(db, m)),
    conversations,
    next_after: `${keepSince ? cursor.since : 0}.${lastId}`,
    has_more: hasMore,
  };
}

/**
 * Up to `max` of the user's messages after the cursor from each conversation with something new
 * (enough for any page), and per conversation the newest id `since` left out. Internal.
 */
function newMessages(
  db: ReadView,
  user: User,
  { since, afterId }: InboxCursor,
  max: number,
): { found: MessageRecord[]; leftOut: string[] } {
  const activity = db.col(ConversationActivity);
  const messages = db.col(Messages);
  const found: MessageRecord[] = [];
  const leftOut: string[] = [];
  for (const cid of db.col(Conversations).ids('participant', user.id)) {
    const a = activity.get(cid);
    if (!a || a.last_message_id === null || a.last_message_id <= afterId) continue;
    const ids = messages.ids('conversation', cid);
    // ids ascend, and within a conversation timestamps ascend with them
    let lo = 0;
    let hi = ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ids[mid]! <= afterId) lo = mid + 1;
      else hi = mid;
    }
    let skipped: string | undefined;
    for (let i = lo, taken = 0; i < ids.length && taken < max; i++) {
      const m = messages.get(ids[i]!)!;
      if (m.timestamp <= since) {
        skipped = m.id;
        continue;
      }
      found.push(m);
      taken++;
    }
    if (skipped !== undefined) leftOut.push(skipped);
  }
  return { found, leftOut };
}
