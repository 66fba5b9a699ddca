import { Introductions, type IntroductionRecord } from './introductions/introductions.js';
import { ContactRequests, type ContactRequestRecord } from './contacts/contact-requests.js';
import { Contacts, type ContactRecord } from './contacts/contacts.js';
import {
  ConversationActivity,
  Conversations,
  Messages,
  type ConversationRecord,
  type MessageRecord,
} from './messaging/collections.js';
import { Accounts } from './wallet/accounts.js';
import { Transactions, type TransactionRecord } from './wallet/transactions.js';
import type { CommittedWrite } from '../store/core/commit-signal.js';
import type { ReadView, StoredRecord } from '../store/core/types.js';

/** Calls `add` for each participant (an index loop: no iterator per call, it runs per write). Internal. */
function addAll(
  ids: readonly string[] | undefined,
  topic: ChangeTopic,
  add: (userId: string, topic: ChangeTopic) => void,
): void {
  if (ids) for (let i = 0; i < ids.length; i++) add(ids[i]!, topic);
}

/** What about a user changed. */
export type ChangeTopic = 'messages' | 'wallet' | 'introductions' | 'contacts';

/**
 * The users a committed write concerns, and what about them changed (from the record after the
 * write, else before it, or `r` when given). Returns false for a collection it does not know, or
 * a record it cannot place (nothing was added): the embedded server wakes the bots of these
 * users, and the API's conditional reads move their validators.
 *
 * @example usersTouched(write, store.read, (id, topic) => wake(id, topic))
 */
export function usersTouched(
  w: CommittedWrite,
  read: ReadView,
  add: (userId: string, topic: ChangeTopic) => void,
  r: StoredRecord | null = w.after ?? w.before,
): boolean {
  if (!r) return false;
  switch (w.collection) {
    case ConversationActivity.name: {
      const conv = read.col(Conversations).get(r.id);
      addAll(conv?.participant_ids, 'messages', add);
      return conv !== undefined;
    }
    case Messages.name: {
      const conv = read.col(Conversations).get((r as MessageRecord).conversation_id);
      addAll(conv?.participant_ids, 'messages', add);
      return conv !== undefined;
    }
    case Conversations.name:
      addAll((r as ConversationRecord).participant_ids, 'messages', add);
      return true;
    case Transactions.name: {
      const t = r as TransactionRecord;
      add(t.recipient_id, 'wallet');
      if (t.sender_id) add(t.sender_id, 'wallet');
      return true;
    }
    case Accounts.name:
      add(r.id, 'wallet');
      return true;
    case Introductions.name: {
      const i = r as IntroductionRecord;
      for (const id of [i.introducer_id, ...i.participant_ids]) add(id, 'introductions');
      return true;
    }
    case ContactRequests.name: {
      const c = r as ContactRequestRecord;
      add(c.requester_id, 'contacts');
      add(c.recipient_id, 'contacts');
      return true;
    }
    case Contacts.name:
      for (const id of (r as ContactRecord).user_ids) add(id, 'contacts');
      return true;
    default:
      return false;
  }
}
