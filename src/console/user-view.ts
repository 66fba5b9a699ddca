import type { User } from '../domain/users/users.js';
import type { ActAs } from './act-as.js';
import type { UserView } from './pages-users.js';

/** Conversations shown with their messages on a user's page (the most recently active). */
const SHOWN_CONVERSATIONS = 5;
const SHOWN_MESSAGES = 30;
/** Pages of 200 messages read per conversation at most (a longer one shows its first 1,000). */
const MAX_PAGES = 5;

/**
 * Reads what a user's page shows through the API as that user (never recorded): balance, what is
 * pending, contacts, and the latest messages of the most recent conversations.
 */
export async function loadUserView(act: ActAs, user: User): Promise<UserView> {
  const get = async <T>(path: string): Promise<T | undefined> => {
    const r = await act.request(user, 'GET', path);
    if (r.status >= 400) throw new Error(`GET ${path} answered ${r.status}: ${JSON.stringify(r.body)}`);
    return r.body as T;
  };
  const view: UserView = { pending: [], requests: [], intros: [], contacts: [], conversations: [] };
  try {
    const [balance, pending, requests, intros, contacts, convs] = await Promise.all([
      get<{ balance: number }>('/wallet/balance'),
      get<{ pending_transactions: UserView['pending'] }>('/wallet/pending'),
      get<{ requests: UserView['requests'] }>('/contacts/requests/pending'),
      get<{ introductions: UserView['intros'] }>('/introductions/pending'),
      get<{ contacts: UserView['contacts'] }>('/contacts'),
      get<{ conversations: Array<Omit<UserView['conversations'][number], 'messages'>> }>(`/conversations?limit=${SHOWN_CONVERSATIONS}`),
    ]);
    view.balance = balance?.balance;
    view.pending = pending?.pending_transactions ?? [];
    view.requests = requests?.requests ?? [];
    view.intros = intros?.introductions ?? [];
    view.contacts = contacts?.contacts ?? [];
    view.conversations = await Promise.all(
      (convs?.conversations ?? []).map(async (c) => {
        // oldest first, 200 a page: read on (a few pages at most) to show the latest
        let messages: UserView['conversations'][number]['messages'] = [];
        let since = 0;
        for (let page = 0; page < MAX_PAGES; page++) {
          const m = await get<{ messages: typeof messages; timestamp: number; has_more: boolean }>(`/conversations/${encodeURIComponent(c.id)}/messages?limit=200&since=${since}`);
          messages = [...messages, ...(m?.messages ?? [])].slice(-SHOWN_MESSAGES);
          if (!m?.has_more) break;
          since = m.timestamp;
        }
        return { ...c, messages };
      }),
    );
  } catch (err) {
    view.error = `could not read everything as ${user.display_name}: ${(err as Error).message}`;
  }
  return view;
}
