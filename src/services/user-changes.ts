import { Introductions, type IntroductionRecord } from '../domain/introductions/introductions.js';
import { ContactRequests, type ContactRequestRecord } from '../domain/contacts/contact-requests.js';
import { Contacts, type ContactRecord } from '../domain/contacts/contacts.js';
import { Conversations, Messages, type ConversationRecord, type MessageRecord } from '../domain/messaging/collections.js';
import { Accounts } from '../domain/wallet/accounts.js';
import { Transactions, type TransactionRecord } from '../domain/wallet/transactions.js';
import type { ChangeFeed } from '../runtime/index.js';
import { commitFeedOf, type CommittedWrite } from '../store/core/commit-signal.js';
import type { ReadView, Store, StoredRecord } from '../store/core/types.js';

type Topic = 'messages' | 'wallet' | 'introductions' | 'contacts';

/** The users a write concerns, and what about them changed. Internal. */
function touched(w: CommittedWrite, read: ReadView, add: (userId: string, topic: Topic) => void): void {
  const r = (w.after ?? w.before) as StoredRecord | null;
  if (!r) return;
  switch (w.collection) {
    case Messages.name: {
      const conv = read.col(Conversations).get((r as MessageRecord).conversation_id);
      for (const id of conv?.participant_ids ?? []) add(id, 'messages');
      return;
    }
    case Conversations.name:
      for (const id of (r as ConversationRecord).participant_ids) add(id, 'messages');
      return;
    case Transactions.name: {
      const t = r as TransactionRecord;
      add(t.recipient_id, 'wallet');
      if (t.sender_id) add(t.sender_id, 'wallet');
      return;
    }
    case Accounts.name:
      add(r.id, 'wallet');
      return;
    case Introductions.name: {
      const i = r as IntroductionRecord;
      for (const id of [i.introducer_id, ...i.participant_ids]) add(id, 'introductions');
      return;
    }
    case ContactRequests.name: {
      const c = r as ContactRequestRecord;
      add(c.requester_id, 'contacts');
      add(c.recipient_id, 'contacts');
      return;
    }
    case Contacts.name:
      for (const id of (r as ContactRecord).user_ids) add(id, 'contacts');
      return;
    default:
      return;
  }
}

const feeds = new WeakMap<Store, ChangeFeed>();

/**
 * What each commit of the embedded server changed for whom: messages and conversations concern
 * their participants (`messages`), transactions and balances their parties (`wallet`),
 * introductions the introducer and participants (`introductions`), contact requests and
 * contacts both users (`contacts`). Bots subscribe by user and poll the matching sources at
 * once; undefined when the store does not report its commits.
 *
 * @example userChanges(store)?.subscribe(me.id, (topics) => loop.wake(sourcesFor(topics)))
 */
export function userChanges(store: Store): ChangeFeed | undefined {
  const known = feeds.get(store);
  if (known) return known;
  const commits = commitFeedOf(store);
  if (!commits) return undefined;
  const listeners = new Map<string, Set<(topics: ReadonlySet<string>, byKey?: string) => void>>();
  commits.subscribe((writes, read, cause) => {
    if (listeners.size === 0) return;
    const byUser = new Map<string, Set<Topic>>();
    for (const w of writes) {
      touched(w, read, (id, topic) => {
        if (!listeners.has(id)) return;
        let s = byUser.get(id);
        if (!s) byUser.set(id, (s = new Set()));
        s.add(topic);
      });
    }
    const byKey = typeof cause === 'string' ? cause : undefined;
    for (const [id, topics] of byUser) for (const l of listeners.get(id) ?? []) l(topics, byKey);
  });
  const feed: ChangeFeed = {
    subscribe(userId, listener) {
      let set = listeners.get(userId);
      if (!set) listeners.set(userId, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(userId);
      };
    },
  };
  feeds.set(store, feed);
  return feed;
}
