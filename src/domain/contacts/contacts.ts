import { DomainError } from '../errors.js';
import { defineCollection, type ReadView, type Tx } from '../../store/core/types.js';
import { newId } from '../../util/ids.js';
import { iso } from '../../clock/clock.js';
import type { DomainEnv } from '../env.js';
import { otherUserByPin, publicUser, userById, type PublicUser, type User } from '../users/users.js';

/** A mutual contact: one record shared by both users, so deleting it removes it for both. */
export interface ContactRecord {
  readonly id: string;
  readonly user_ids: readonly [string, string];
  readonly created_at: number;
}

/** Internal: the key of a pair of users, whatever their order. */
function pairKey(a: string, b: string): string {
  return a < b ? `${a}|${b}` : `${b}|${a}`;
}

export const Contacts = defineCollection<ContactRecord>({
  name: 'contacts',
  unique: { pair: (c) => pairKey(c.user_ids[0], c.user_ids[1]) },
  multi: { user: (c) => c.user_ids },
});

/** A contact list entry as `GET /contacts` shows it to `viewerId`. */
export interface ContactEntry {
  id: string;
  contact: PublicUser;
  created_at: string;
}

/**
 * Renders a contact from one side: `contact` is the other user.
 *
 * @example toContactEntry(db, contact, alice.id).contact.display_name // 'Bob'
 */
export function toContactEntry(db: ReadView, c: ContactRecord, viewerId: string): ContactEntry {
  const other = c.user_ids[0] === viewerId ? c.user_ids[1] : c.user_ids[0];
  return { id: c.id, contact: publicUser(userById(db, other)), created_at: iso(c.created_at) };
}

/** The contact record of two users, if they are contacts. */
export function contactBetween(db: ReadView, a: string, b: string): ContactRecord | undefined {
  return db.col(Contacts).one('pair', pairKey(a, b));
}

/** Makes two users contacts (answers the existing record if they already are). */
export function addContact(tx: Tx, env: DomainEnv, a: string, b: string): ContactRecord {
  return (
    contactBetween(tx, a, b) ??
    tx.col(Contacts).insert({ id: newId('con'), user_ids: [a, b], created_at: env.clock.now() })
  );
}

/** The caller's contacts, newest first. */
export function listContacts(db: ReadView, user: User): ContactEntry[] {
  const coll = db.col(Contacts);
  return [...coll.ids('user', user.id)].reverse().map((id) => toContactEntry(db, coll.get(id)!, user.id));
}

/**
 * `DELETE /contacts/:id`: removes the contact for both users. A contact the caller is not in
 * is 404 `contact_not_found`.
 */
export function deleteContact(tx: Tx, user: User, id: string): { message: string } {
  const c = tx.col(Contacts).get(id);
  if (!c || !c.user_ids.includes(user.id)) throw new DomainError('contact_not_found');
  const other = userById(tx, c.user_ids[0] === user.id ? c.user_ids[1] : c.user_ids[0]);
  tx.col(Contacts).delete(id);
  return { message: `${other.display_name} was removed from your contacts, and you from theirs.` };
}

/**
 * `GET /contacts/check/:pin`: whether the user with that PIN is a contact of the caller.
 * The `user` here is `{ id, display_name }` only, as API.md gives it.
 */
export function checkContact(
  db: ReadView,
  user: User,
  pin: string,
): { is_contact: boolean; user: { id: string; display_name: string } } {
  const other = otherUserByPin(db, user, pin);
  return {
    is_contact: contactBetween(db, user.id, other.id) !== undefined,
    user: { id: other.id, display_name: other.display_name },
  };
}
