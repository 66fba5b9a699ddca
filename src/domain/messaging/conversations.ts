import { byteSize, chargeUsage } from '../quotas.js';
import { DomainError } from '../errors.js';
import type { ReadView, Tx } from '../../store/core/types.js';
import { newId } from '../../util/ids.js';
import { iso } from '../../clock/clock.js';
import type { DomainEnv } from '../env.js';
import { normalizePin, otherUserByPin, publicUser, userById, type PublicUser, type User } from '../users/users.js';
import {
  ConversationActivity,
  Conversations,
  directKey,
  Messages,
  type ConversationActivityRecord,
  type ConversationRecord,
} from './collections.js';
import { toMessage, type MessageView } from './messages.js';

/** The conversation object of every response (API.md "Messaging"). */
export interface ConversationView {
  id: string;
  type: 'direct' | 'group';
  name: string | null;
  participants: PublicUser[];
  last_message: MessageView | null;
  created_at: string;
  updated_at: string;
}

/**
 * Renders a stored conversation with its participants and last message.
 *
 * @example toConversation(db, conversationFor(db, alice, id)).last_message?.content
 */
export function toConversation(db: ReadView, c: ConversationRecord): ConversationView {
  const activity = activityOf(db, c.id);
  const last = activity.last_message_id === null ? undefined : db.col(Messages).get(activity.last_message_id);
  return {
    id: c.id,
    type: c.type,
    name: c.name,
    participants: c.participant_ids.map((id) => publicUser(userById(db, id))),
    last_message: last ? toMessage(db, last) : null,
    created_at: iso(c.created_at),
    updated_at: iso(activity.activity_at),
  };
}

/** The activity record of a conversation (written with it, so it always exists). */
export function activityOf(db: ReadView, conversationId: string): ConversationActivityRecord {
  const a = db.col(ConversationActivity).get(conversationId);
  if (!a) throw new Error(`conversation ${conversationId} has no activity record`);
  return a;
}

/** Stores a new conversation with its activity record. Internal. */
function insertConversation(tx: Tx, record: ConversationRecord): ConversationRecord {
  const conversation = tx.col(Conversations).insert(record);
  tx.col(ConversationActivity).insert({
    id: record.id,
    activity_at: record.created_at,
    last_message_id: null,
    last_timestamp: 0,
  });
  return conversation;
}

/** The conversation `id` if `user` is in it; otherwise 404 `conversation_not_found`, as if it did not exist. */
export function conversationFor(db: ReadView, user: User, id: string): ConversationRecord {
  const c = db.col(Conversations).get(id);
  if (!c || !c.participant_ids.includes(user.id)) throw new DomainError('conversation_not_found');
  return c;
}

/**
 * The direct conversation of two users, created if none exists (one per pair, whoever started it).
 *
 * @example const { conversation, created } = directConversation(tx, env, alice.id, bob.id);
 */
export function directConversation(
  tx: Tx,
  env: DomainEnv,
  creatorId: string,
  otherId: string,
): { conversation: ConversationRecord; created: boolean } {
  const coll = tx.col(Conversations);
  const key = directKey(creatorId, otherId);
  const existing = coll.one('direct', key);
  if (existing) return { conversation: existing, created: false };
  const now = env.clock.now();
  const conversation = insertConversation(tx, {
    id: newId('cnv'),
    type: 'direct',
    name: null,
    participant_ids: [creatorId, otherId],
    direct_key: key,
    created_at: now,
  });
  return { conversation, created: true };
}

/** Creates a group conversation of `participantIds` (already checked: distinct, existing). */
export function createGroup(
  tx: Tx,
  env: DomainEnv,
  participantIds: readonly string[],
  name: string,
): ConversationRecord {
  return insertConversation(tx, {
    id: newId('cnv'),
    type: 'group',
    name,
    participant_ids: [...participantIds],
    created_at: env.clock.now(),
  });
}

/**
 * Resolves a list of PINs of other users: no two alike after normalising (400
 * `validation_failed` naming the repeated entry), each a known user (404 `user_not_found`) other
 * than `self` (400 `cannot_target_self`). Shared by groups and introductions.
 */
export function resolveDistinctPins(db: ReadView, self: User, pins: readonly string[], path: string): User[] {
  const seen = new Map<string, number>();
  pins.forEach((pin, i) => {
    const norm = normalizePin(pin);
    const first = seen.get(norm);
    if (first !== undefined) {
      throw new DomainError('validation_failed', undefined, [
        { path: `${path}.${i}`, message: `repeats ${path}.${first} (${norm}); each PIN may appear once` },
      ]);
    }
    seen.set(norm, i);
  });
  return pins.map((pin) => otherUserByPin(db, self, pin));
}

export interface OpenConversationInput {
  participant_pin?: string;
  participant_pins?: string[];
  name?: string;
}

const invalid = (path: string, message: string) => new DomainError('validation_failed', undefined, [{ path, message }]);

/**
 * `POST /conversations`: direct `{ participant_pin }` answers the existing conversation
 * (`created: false`) or a new one; group `{ participant_pins, name }` always creates one, with
 * the caller as first participant and 1 to `max_group_size - 1` others.
 */
export function openConversation(
  tx: Tx,
  env: DomainEnv,
  user: User,
  input: OpenConversationInput,
): { conversation: ConversationRecord; created: boolean } {
  const direct = input.participant_pin !== undefined;
  const group = input.participant_pins !== undefined;
  if (direct === group) {
    throw invalid(
      'body',
      'send either participant_pin (a direct conversation) or participant_pins with ' +
        'name (a group), not both or neither',
    );
  }
  if (direct) {
    if (input.name !== undefined) throw invalid('body.name', 'is only for groups (with participant_pins); remove it');
    const other = otherUserByPin(tx, user, input.participant_pin!);
    return directConversation(tx, env, user.id, other.id);
  }
  if (input.name === undefined) throw invalid('body.name', 'is required for a group');
  const name = input.name.trim();
  if (name.length === 0) throw invalid('body.name', 'must contain something besides whitespace');
  const pins = input.participant_pins!;
  const maxOthers = env.config.messaging.max_group_size - 1;
  if (pins.length < 1) throw invalid('body.participant_pins', 'must list at least 1 other participant');
  if (pins.length > maxOthers) {
    throw invalid(
      'body.participant_pins',
      `must list at most ${maxOthers} others (messaging.max_group_size is ${maxOthers + 1}, counting you)`,
    );
  }
  const others = resolveDistinctPins(tx, user, pins, 'body.participant_pins');
  chargeUsage(tx, env, user.id, byteSize(name), 'body.name', 1);
  return { conversation: createGroup(tx, env, [user.id, ...others.map((o) => o.id)], name), created: true };
}

/** A page of `GET /conversations` (extension: paging). */
export interface ConversationPageView {
  conversations: ConversationView[];
  has_more: boolean;
  /** Pass as `before` for the next page; `null` on the last page. */
  next_before: string | null;
}

/**
 * The position of a conversation in the activity order, as `before` takes it:
 * `<last activity, ms>.<id>`. The position is frozen in the cursor, so a conversation that moves
 * to the top while a client pages neither restarts nor repeats the pages that follow.
 */
export function conversationCursor(activityAt: number, id: string): string {
  return `${activityAt}.${id}`;
}

/** `[activity ms, id]` of a cursor; undefined when it is not one. Internal. */
function parseCursor(cursor: string): [number, string] | undefined {
  const m = /^(\d{1,16})\.(.+)$/.exec(cursor);
  return m ? [Number(m[1]), m[2]!] : undefined;
}

/**
 * The caller's conversations, most recent activity first (ties: newer id first), at most
 * `limit`, only those after the cursor `before` when given. Reads only the caller's own
 * conversations through the participant index and renders only the page.
 *
 * @example listConversations(db, alice, { limit: 50 }).next_before
 */
export function listConversations(
  db: ReadView,
  user: User,
  { limit = 50, before }: { limit?: number; before?: string } = {},
): ConversationPageView {
  const coll = db.col(Conversations);
  const mine = coll.ids('participant', user.id).map((id) => ({ id, at: activityOf(db, id).activity_at }));
  const newerFirst = (a: { id: string; at: number }, b: { id: string; at: number }) =>
    b.at - a.at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
  mine.sort(newerFirst);
  let start = 0;
  const cursor = before === undefined ? undefined : parseCursor(before);
  if (before !== undefined) {
    if (!cursor)
      throw new DomainError('validation_failed', undefined, [
        { path: 'query.before', message: 'must be the next_before of a previous page (<ms>.<conversation id>)' },
      ]);
    const [at, id] = cursor;
    start = mine.findIndex((c) => newerFirst({ id, at }, c) < 0);
    if (start < 0) start = mine.length;
  }
  const page = mine.slice(start, start + limit);
  const hasMore = start + limit < mine.length;
  const last = page[page.length - 1];
  return {
    conversations: page.map(({ id }) => toConversation(db, coll.get(id)!)),
    has_more: hasMore,
    next_before: hasMore && last ? conversationCursor(last.at, last.id) : null,
  };
}

/**
 * `POST /conversations/:id/leave` (extension): the caller leaves a group they are in. The group
 * goes on without them (its messages stay); it no longer exists for them (404), and nobody can
 * put them back in it. A direct conversation cannot be left (400 `cannot_leave_direct`).
 *
 * @example leaveConversation(tx, bob, group.id)
 */
export function leaveConversation(tx: Tx, user: User, id: string): ConversationRecord {
  const c = conversationFor(tx, user, id);
  if (c.type === 'direct') throw new DomainError('cannot_leave_direct');
  return tx.col(Conversations).update(c.id, { participant_ids: c.participant_ids.filter((p) => p !== user.id) });
}
