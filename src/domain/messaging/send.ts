import type { Tx } from '../../store/core/types.js';
import type { DomainEnv } from '../env.js';
import { otherUserByPin, type User } from '../users/users.js';
import type { MessageRecord } from './collections.js';
import { conversationFor, directConversation } from './conversations.js';
import { checkContent, postMessage } from './messages.js';

/**
 * `POST /messages/send`: a message to a user by PIN, in the direct conversation of the two,
 * which is created if none exists. Content is checked before the PIN is looked up.
 *
 * @example sendDirect(tx, env, alice, { recipient_pin: 'K7Q2ZD', content: 'hi' })
 */
export function sendDirect(
  tx: Tx,
  env: DomainEnv,
  user: User,
  input: { recipient_pin: string; content: string },
): MessageRecord {
  checkContent(env, input.content);
  const other = otherUserByPin(tx, user, input.recipient_pin);
  const { conversation } = directConversation(tx, env, user.id, other.id);
  return postMessage(tx, env, conversation, user.id, input.content);
}

/**
 * `POST /conversations/:id/messages`: a message in a conversation the caller is in (else 404
 * `conversation_not_found`).
 */
export function sendToConversation(
  tx: Tx,
  env: DomainEnv,
  user: User,
  conversationId: string,
  content: string,
): MessageRecord {
  const conversation = conversationFor(tx, user, conversationId);
  checkContent(env, content);
  return postMessage(tx, env, conversation, user.id, content);
}
