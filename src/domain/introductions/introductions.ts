import { byteSize, chargeUsage } from '../quotas.js';
import { DomainError } from '../errors.js';
import { defineCollection, type ReadView, type Tx } from '../../store/core/types.js';
import { newId } from '../../util/ids.js';
import { iso } from '../../clock/clock.js';
import type { DomainEnv } from '../env.js';
import { createGroup, directConversation, resolveDistinctPins } from '../messaging/conversations.js';
import { publicUser, userById, type PublicUser, type User } from '../users/users.js';

export type IntroductionStatus = 'pending' | 'accepted' | 'declined';
export type ParticipantResponse = 'pending' | 'accepted' | 'declined';

/** A stored introduction; `responses[i]` is the answer of `participant_ids[i]`. */
export interface IntroductionRecord {
  readonly id: string;
  readonly introducer_id: string;
  readonly participant_ids: readonly string[];
  readonly responses: readonly ParticipantResponse[];
  readonly message: string;
  readonly status: IntroductionStatus;
  readonly conversation_id?: string;
  readonly created_at: number;
  readonly updated_at: number;
}

/**
 * Introductions, indexed by every party (introducer and participants: `GET /introductions`)
 * and by each participant whose answer is still awaited (`GET /introductions/pending`).
 */
export const Introductions = defineCollection<IntroductionRecord>({
  name: 'introductions',
  multi: {
    party: (i) => [i.introducer_id, ...i.participant_ids],
    awaiting: (i) => (i.status === 'pending' ? i.participant_ids.filter((_, k) => i.responses[k] === 'pending') : []),
  },
});

/** The introduction object (API.md "Introductions"); `conversation_id` only once accepted. */
export interface IntroductionView {
  id: string;
  introducer: PublicUser;
  participants: Array<PublicUser & { response: ParticipantResponse }>;
  message: string;
  status: IntroductionStatus;
  conversation_id?: string;
  created_at: string;
}

/**
 * Renders a stored introduction for any of its parties.
 *
 * @example toIntroduction(db, db.col(Introductions).get(id)!).participants[0].response // 'pending'
 */
export function toIntroduction(db: ReadView, i: IntroductionRecord): IntroductionView {
  return {
    id: i.id,
    introducer: publicUser(userById(db, i.introducer_id)),
    participants: i.participant_ids.map((id, k) => ({ ...publicUser(userById(db, id)), response: i.responses[k]! })),
    message: i.message,
    status: i.status,
    ...(i.conversation_id !== undefined ? { conversation_id: i.conversation_id } : {}),
    created_at: iso(i.created_at),
  };
}

/**
 * `POST /introductions`: introduces 2 or more distinct other users to each other. At most
 * `messaging.max_group_size` of them, since they end up in one conversation.
 *
 * @example createIntroduction(tx, env, alice, { participant_pins: ['K7Q2ZD', 'M3X9PA'], message: 'meet!' })
 */
export function createIntroduction(
  tx: Tx,
  env: DomainEnv,
  user: User,
  input: { participant_pins: string[]; message?: string },
): IntroductionRecord {
  const max = env.config.messaging.max_group_size;
  if (input.participant_pins.length > max) {
    throw new DomainError('validation_failed', undefined, [
      { path: 'body.participant_pins', message: `must list at most ${max} PINs (messaging.max_group_size)` },
    ]);
  }
  const people = resolveDistinctPins(tx, user, input.participant_pins, 'body.participant_pins');
  if (input.message) chargeUsage(tx, env, user.id, byteSize(input.message), 'body.message');
  const now = env.clock.now();
  return tx.col(Introductions).insert({
    id: newId('int'),
    introducer_id: user.id,
    participant_ids: people.map((p) => p.id),
    responses: people.map(() => 'pending' as const),
    message: input.message ?? '',
    status: 'pending',
    created_at: now,
    updated_at: now,
  });
}

/** Introductions the caller made or is in, newest first. */
export function listIntroductions(db: ReadView, user: User): IntroductionView[] {
  const coll = db.col(Introductions);
  return [...coll.ids('party', user.id)].reverse().map((id) => toIntroduction(db, coll.get(id)!));
}

/** Introductions still pending that await the caller's own answer, newest first. */
export function pendingIntroductions(db: ReadView, user: User): IntroductionView[] {
  const coll = db.col(Introductions);
  return [...coll.ids('awaiting', user.id)].reverse().map((id) => toIntroduction(db, coll.get(id)!));
}

export interface AnswerResult {
  id: string;
  status: IntroductionStatus;
  conversation_id?: string;
}

/** Name of the group an accepted introduction of 3 or more creates (at most 100 code points). Internal. */
function groupName(db: ReadView, i: IntroductionRecord): string {
  return [...`Introduced by ${userById(db, i.introducer_id).display_name}`].slice(0, 100).join('');
}

/**
 * Records the caller's answer. Checks, in order: the caller is a party (else 404
 * `introduction_not_found`), not the introducer (403 `forbidden`), the introduction and the
 * caller's answer are pending (409 `introduction_not_pending`). One decline ends it; the last
 * acceptance creates the participants' conversation (direct for two, reusing theirs; else a group).
 */
export function answerIntroduction(
  tx: Tx,
  env: DomainEnv,
  user: User,
  id: string,
  answer: 'accepted' | 'declined',
): AnswerResult {
  const coll = tx.col(Introductions);
  const intro = coll.get(id);
  const k = intro ? intro.participant_ids.indexOf(user.id) : -1;
  if (!intro || (k < 0 && intro.introducer_id !== user.id)) throw new DomainError('introduction_not_found');
  if (k < 0)
    throw new DomainError(
      'forbidden',
      'You made this introduction: only the people introduced can accept or decline it.',
    );
  if (intro.status !== 'pending' || intro.responses[k] !== 'pending') throw new DomainError('introduction_not_pending');
  const responses = intro.responses.map((r, j) => (j === k ? answer : r));
  const now = env.clock.now();
  if (answer === 'declined') {
    coll.update(id, { responses, status: 'declined', updated_at: now });
    return { id, status: 'declined' };
  }
  if (responses.some((r) => r !== 'accepted')) {
    coll.update(id, { responses, updated_at: now });
    return { id, status: 'pending' };
  }
  const ids = intro.participant_ids;
  const conversation =
    ids.length === 2
      ? directConversation(tx, env, ids[0]!, ids[1]!).conversation
      : createGroup(tx, env, ids, groupName(tx, intro));
  coll.update(id, { responses, status: 'accepted', conversation_id: conversation.id, updated_at: now });
  return { id, status: 'accepted', conversation_id: conversation.id };
}
