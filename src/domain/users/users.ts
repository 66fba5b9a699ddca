import { normalizePin } from '../../util/pin.js';
import { DomainError } from '../errors.js';
import { startTrial } from '../wallet/subscription.js';
import { defineCollection, type ReadView, type Tx } from '../../store/core/types.js';
import { newId } from '../../util/ids.js';
import { randomBelow } from '../../util/random.js';
import type { DomainEnv } from '../env.js';

export interface User {
  readonly id: string;
  readonly display_name: string;
  readonly pin_code: string;
  readonly created_at: number;
}

/** The user object of every response (API.md): `{ id, display_name, pin_code }`. */
export interface PublicUser {
  id: string;
  display_name: string;
  pin_code: string;
}

export const Users = defineCollection<User>({
  name: 'users',
  unique: { pin: (u) => u.pin_code },
  multi: { name: (u) => u.display_name.toLowerCase() },
});

const PIN_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export { normalizePin };

export function publicUser(u: User): PublicUser {
  return { id: u.id, display_name: u.display_name, pin_code: u.pin_code };
}

/** The user with `pin`, or 404 `user_not_found`. */
export function userByPin(db: ReadView, pin: string): User {
  const user = db.col(Users).one('pin', normalizePin(pin));
  if (!user)
    throw new DomainError('user_not_found', `No user has the PIN ${JSON.stringify(normalizePin(pin))}. Check the PIN.`);
  return user;
}

/** The user with `pin` who is not `self`: 404 for unknown, 400 `cannot_target_self` for self. */
export function otherUserByPin(db: ReadView, self: User, pin: string): User {
  const user = userByPin(db, pin);
  if (user.id === self.id) throw new DomainError('cannot_target_self');
  return user;
}

/** The user by id; throws if missing (ids come from the store, so that is a bug). */
export function userById(db: ReadView, id: string): User {
  const user = db.col(Users).get(id);
  if (!user) throw new Error(`user ${id} is missing`);
  return user;
}

/** The users whose display name is `name` (trimmed, any case), oldest first. */
export function usersNamed(db: ReadView, name: string): User[] {
  return db
    .col(Users)
    .ids('name', name.trim().toLowerCase())
    .map((id) => db.col(Users).get(id)!)
    .sort((a, b) => a.created_at - b.created_at);
}

/** A user by PIN or by display name (case-insensitive; the name must be unambiguous). */
export function findUser(db: ReadView, nameOrPin: string): User | undefined {
  const byPin = db.col(Users).one('pin', normalizePin(nameOrPin));
  if (byPin) return byPin;
  const ids = db.col(Users).ids('name', nameOrPin.trim().toLowerCase());
  if (ids.length === 1) return db.col(Users).get(ids[0]!);
  if (ids.length > 1) {
    const pins = ids.map((id) => db.col(Users).get(id)!.pin_code).join(', ');
    throw new Error(
      `${ids.length} users are named ${JSON.stringify(nameOrPin.trim())} (PINs ` +
        `${pins}): write the PIN of the one you mean instead of the name (pinbot users ` +
        `list)`,
    );
  }
  return undefined;
}

function randomPin(): string {
  let pin = '';
  for (let i = 0; i < 6; i++) pin += PIN_ALPHABET[randomBelow(PIN_ALPHABET.length)];
  return pin;
}

/**
 * Creates a user with a fresh unique PIN. Every user, however created (CLI online or offline,
 * bots' `create_user`, the test kit), starts with the trial subscription in the same transaction.
 */
export function createUser(tx: Tx, env: DomainEnv, input: { name: string }): User {
  const name = input.name.trim();
  if (name.length === 0 || name.length > 100) throw new Error('a display name is 1 to 100 characters');
  const users = tx.col(Users);
  let pin = randomPin();
  while (users.one('pin', pin)) pin = randomPin();
  const user = users.insert({ id: newId('usr'), display_name: name, pin_code: pin, created_at: env.clock.now() });
  startTrial(tx, env, user.id);
  return user;
}
