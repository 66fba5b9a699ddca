import { DomainError } from '../errors.js';
import { defineCollection, type ReadView, type Tx } from '../../store/core/types.js';
import { newId } from '../../util/ids.js';
import { iso } from '../../clock/clock.js';
import type { DomainEnv } from '../env.js';
import { otherUserByPin, publicUser, userById, type PublicUser, type User } from '../users/users.js';
import { addContact, contactBetween, toContactEntry, type ContactEntry } from './contacts.js';

export type ContactRequestStatus = 'pending' | 'accepted' | 'declined';

export interface ContactRequestRecord {
  readonly id: string;
  readonly requester_id: string;
  readonly recipient_id: string;
  readonly status: ContactRequestStatus;
  readonly created_at: number;
  readonly updated_at: number;
}

/**
 * Contact requests, indexed while pending: by (requester, recipient) so a duplicate or a
 * request the other way is found in O(1), and by recipient for the pending list.
 */
export const ContactRequests = defineCollection<ContactRequestRecord>({
  name: 'contact_requests',
  unique: { pending_pair: (r) => (r.status === 'pending' ? `${r.requester_id}>${r.recipient_id}` : undefined) },
  multi: { incoming: (r) => (r.status === 'pending' ? r.recipient_id : undefined) },
});

export interface ContactRequestView {
  id: string;
  requester: PublicUser;
  recipient: PublicUser;
  status: ContactRequestStatus;
  created_at: string;
}

/**
 * Renders a request as `POST /contacts/request` answers it.
 *
 * @example toContactRequest(tx, requestContact(tx, env, alice, pin)).status // 'pending'
 */
export function toContactRequest(db: ReadView, r: ContactRequestRecord): ContactRequestView {
  return {
    id: r.id,
    requester: publicUser(userById(db, r.requester_id)),
    recipient: publicUser(userById(db, r.recipient_id)),
    status: r.status,
    created_at: iso(r.created_at),
  };
}

/**
 * `POST /contacts/request`: asks the user with `pin` to become a contact. Already contacts:
 * 409 `already_contacts`; a pending request from the caller: 409 `request_exists`. When the
 * other user has a pending request to the caller, mutual intent is acceptance: both requests
 * become `accepted`, the contact is created and the caller's request is answered `accepted`.
 *
 * @example const r = requestContact(tx, env, alice, 'K7Q2ZD'); // r.status === 'pending'
 */
export function requestContact(tx: Tx, env: DomainEnv, user: User, pin: string): ContactRequestRecord {
  const other = otherUserByPin(tx, user, pin);
  if (contactBetween(tx, user.id, other.id))
    throw new DomainError('already_contacts', `You and ${other.display_name} are already contacts.`);
  const coll = tx.col(ContactRequests);
  if (coll.one('pending_pair', `${user.id}>${other.id}`)) throw new DomainError('request_exists');
  const now = env.clock.now();
  const reverse = coll.one('pending_pair', `${other.id}>${user.id}`);
  if (reverse) {
    coll.update(reverse.id, { status: 'accepted', updated_at: now });
    addContact(tx, env, other.id, user.id);
  }
  return coll.insert({
    id: newId('creq'),
    requester_id: user.id,
    recipient_id: other.id,
    status: reverse ? 'accepted' : 'pending',
    created_at: now,
    updated_at: now,
  });
}

/** Incoming pending requests, newest first: `{ id, requester, created_at }`. */
export function pendingContactRequests(
  db: ReadView,
  user: User,
): Array<{ id: string; requester: PublicUser; created_at: string }> {
  const coll = db.col(ContactRequests);
  return [...coll.ids('incoming', user.id)].reverse().map((id) => {
    const r = coll.get(id)!;
    return { id: r.id, requester: publicUser(userById(db, r.requester_id)), created_at: iso(r.created_at) };
  });
}

/**
 * Accepts or declines a request addressed to the caller. Checks, in order: the caller is a
 * party (else 404 `contact_request_not_found`), not the requester (403 `forbidden`), the request
 * is pending (409 `contact_request_not_pending`).
 */
export function answerContactRequest(
  tx: Tx,
  env: DomainEnv,
  user: User,
  id: string,
  answer: 'accepted' | 'declined',
): { message: string; contact?: ContactEntry } {
  const coll = tx.col(ContactRequests);
  const r = coll.get(id);
  if (!r || (r.recipient_id !== user.id && r.requester_id !== user.id))
    throw new DomainError('contact_request_not_found');
  if (r.recipient_id !== user.id)
    throw new DomainError('forbidden', 'You sent this contact request: only its recipient can accept or decline it.');
  if (r.status !== 'pending') throw new DomainError('contact_request_not_pending');
  coll.update(id, { status: answer, updated_at: env.clock.now() });
  const requester = userById(tx, r.requester_id);
  if (answer === 'declined') return { message: `Contact request from ${requester.display_name} declined.` };
  const contact = addContact(tx, env, r.requester_id, r.recipient_id);
  return {
    message: `You and ${requester.display_name} are now contacts.`,
    contact: toContactEntry(tx, contact, user.id),
  };
}
