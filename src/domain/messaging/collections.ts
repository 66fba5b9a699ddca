import { defineCollection } from '../../store/core/types.js';

/** A stored conversation. Participants are user ids, in the order they were added. */
export interface ConversationRecord {
  readonly id: string;
  readonly type: 'direct' | 'group';
  /** `null` for direct conversations. */
  readonly name: string | null;
  readonly participant_ids: readonly string[];
  /** Direct only: the two user ids sorted and joined, so one pair has one direct conversation. */
  readonly direct_key?: string;
  readonly created_at: number;
}

/**
 * What changes with every message, kept apart from the conversation (same id) so that a message
 * rewrites a record without indexes: updating the conversation itself would re-index it under
 * every participant, a cost that grows with the group.
 */
export interface ConversationActivityRecord {
  /** The conversation's id. */
  readonly id: string;
  /** Last activity (ms): the newest message's timestamp, or `created_at` while there is none. */
  readonly activity_at: number;
  readonly last_message_id: string | null;
  /** Timestamp of the newest message, 0 while there is none: the next one gets at least this + 1. */
  readonly last_timestamp: number;
}

/** A stored message. `timestamp` is strictly increasing within its conversation. */
export interface MessageRecord {
  readonly id: string;
  readonly conversation_id: string;
  readonly sender_id: string;
  readonly content: string;
  readonly timestamp: number;
}

/**
 * Conversations, indexed by participant (a user's own conversations without a scan) and by the
 * pair of a direct conversation (so `POST /messages/send` finds it in O(1)).
 */
export const Conversations = defineCollection<ConversationRecord>({
  name: 'conversations',
  unique: { direct: (c) => c.direct_key },
  multi: { participant: (c) => c.participant_ids },
});

/** The activity of each conversation, by conversation id (no indexes). */
export const ConversationActivity = defineCollection<ConversationActivityRecord>({ name: 'conversation_activity' });

/**
 * Messages, indexed by conversation. The index keeps ids ascending; ids are time-sortable and
 * messages of one conversation are written one transaction after another, so id order is
 * insertion order, which is timestamp order: `since` is a binary search over this index.
 */
export const Messages = defineCollection<MessageRecord>({
  name: 'messages',
  multi: { conversation: (m) => m.conversation_id },
});

/** The key of the direct conversation between two users (order does not matter). Internal. */
export function directKey(a: string, b: string): string {
  return a < b ? `${a}|${b}` : `${b}|${a}`;
}
