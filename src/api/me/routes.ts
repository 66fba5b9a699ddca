import { publicUser, type User } from '../../domain/users/users.js';
import { defineRoute, type RouteResult } from '../route.js';

/**
 * `/me`'s answer by user record, its JSON made once (issue 33: `JSON.stringify` was the largest
 * single part of the read's own work). A stored record is frozen and a change to a user stores a
 * new one, so the text of a record never goes stale; an unfrozen record (none the stores make)
 * is answered afresh. Held weakly: an entry lives only as long as its record, and only a key
 * that authenticated reaches the handler. Internal.
 */
const answers = new WeakMap<User, RouteResult>();

/** The answer of `GET /me` for `user`. Internal. */
function meAnswer(user: User): RouteResult {
  let answer = answers.get(user);
  if (answer === undefined) {
    const body = Object.freeze(publicUser(user));
    answer = Object.freeze({ status: 200, body, json: JSON.stringify(body) });
    if (Object.isFrozen(user)) answers.set(user, answer);
  }
  return answer;
}

export const meRoutes = [
  defineRoute({
    method: 'get',
    path: '/me',
    summary: 'Your own profile',
    description: "The profile of the key's user: id, display name and PIN (share the PIN so others can reach you).",
    tags: ['profile'],
    schemas: { responses: { 200: { $ref: 'User' } } },
    handler: ({ user }) => meAnswer(user),
  }),
];
