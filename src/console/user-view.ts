import type { DomainEnv } from '../domain/env.js';
import { pendingContactRequests } from '../domain/contacts/contact-requests.js';
import { listContacts } from '../domain/contacts/contacts.js';
import { pendingIntroductions } from '../domain/introductions/introductions.js';
import { listConversations } from '../domain/messaging/conversations.js';
import { listMessages } from '../domain/messaging/messages.js';
import type { User } from '../domain/users/users.js';
import { walletBalance } from '../domain/wallet/balance.js';
import { pendingFor } from '../domain/wallet/transactions.js';
import type { ReadView } from '../store/core/types.js';
import type { UserView } from './pages-users.js';

/** Conversations shown with their messages on a user's page (the most recently active). */
const SHOWN_CONVERSATIONS = 5;
const SHOWN_MESSAGES = 30;

/**
 * What a user's page shows — balance, what is pending, contacts, the latest messages of the most
 * recent conversations — read from the store with the domain's own read functions (what the API
 * answers that user), not through the API as them: a page, and every live refresh of it, spends
 * none of the user's rate limit (a page used to cost 6–7 requests as the user on every commit,
 * and other users' traffic drove its bot into 429s).
 *
 * @example const view = loadUserView(store.read, env, bob);
 */
export function loadUserView(db: ReadView, env: DomainEnv, user: User): UserView {
  const view: UserView = { pending: [], requests: [], intros: [], contacts: [], conversations: [] };
  try {
    view.balance = walletBalance(db, env, user.id).balance;
    view.pending = pendingFor(db, user.id);
    view.requests = pendingContactRequests(db, user);
    view.intros = pendingIntroductions(db, user);
    view.contacts = listContacts(db, user);
    view.conversations = listConversations(db, user, { limit: SHOWN_CONVERSATIONS }).conversations.map((c) => ({
      ...c,
      messages: listMessages(db, c.id, { limit: SHOWN_MESSAGES }).messages,
    }));
  } catch (err) {
    view.error = `could not read everything of ${user.display_name}: ${(err as Error).message}`;
  }
  return view;
}
