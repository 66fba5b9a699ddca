/**
 * Request and response types of `/api/v1`, as the contract (API.md) describes them.
 * Amounts are JSON numbers with at most 2 decimals; `timestamp` fields are epoch milliseconds;
 * fields ending in `_at` are ISO 8601 strings.
 */

/** A user object wherever one appears (sender, introducer, requester, participants …). */
export interface UserRef {
  id: string;
  display_name: string;
  pin_code: string;
}

/** `GET /me`. */
export type Profile = UserRef;

/** `GET /wallet/balance`. */
export interface Balance {
  balance: number;
  subscription_days: number;
  is_subscribed: boolean;
  /** `YYYY-MM-DD`. */
  next_shmita: string;
}

/** `GET /wallet/subscription`. */
export interface Subscription {
  is_subscribed: boolean;
  status: 'active' | 'expired' | 'none';
  start_date: string | null;
  end_date: string | null;
}

export type TransactionStatus = 'pending' | 'accepted' | 'declined';

/** A transaction from the caller's point of view. */
export interface Transaction {
  id: string;
  type: 'transfer' | 'ubi' | 'grant';
  amount: number;
  status: TransactionStatus;
  direction: 'sent' | 'received';
  note: string;
  sender: UserRef | null;
  recipient: UserRef;
  sender_pin: string | null;
  recipient_pin: string;
  created_at: string;
  updated_at: string;
}

/** An incoming transfer awaiting the caller (`GET /wallet/pending`). */
export interface PendingTransaction {
  id: string;
  amount: number;
  sender_pin: string;
  sender: UserRef;
  note: string;
  created_at: string;
}

export interface SendMoneyInput {
  recipient_pin: string;
  amount: number;
  note?: string;
}

/** `POST /wallet/send`, `…/accept`, `…/decline`. */
export interface TransactionResult {
  message: string;
  transaction: Transaction;
}

export interface Message {
  id: string;
  conversation_id: string;
  content: string;
  sender: UserRef;
  timestamp: number;
  created_at: string;
}

export interface Conversation {
  id: string;
  type: 'direct' | 'group';
  name: string | null;
  participants: UserRef[];
  last_message: Message | null;
  created_at: string;
  updated_at: string;
}

/** `GET /conversations/:id/messages`. */
/** A page of `GET /conversations` (pinbot extension: paging). */
export interface ConversationPage {
  conversations: Conversation[];
  has_more: boolean;
  /** Pass as `before` for the next page; null on the last. */
  next_before: string | null;
}

export interface MessagePage {
  messages: Message[];
  timestamp: number;
  has_more: boolean;
}

/** `GET /messages` (pinbot extension): new messages across the caller's conversations. */
export interface InboxPage {
  /** In the order they were written. */
  messages: Message[];
  /** The conversations of `messages`, each once. */
  conversations: Conversation[];
  /** Pass as `after` next time (opaque). */
  next_after: string;
  has_more: boolean;
}

export type CreateConversationInput = { participant_pin: string } | { participant_pins: string[]; name: string };

export type IntroductionResponse = 'pending' | 'accepted' | 'declined';

export interface IntroductionParticipant extends UserRef {
  response: IntroductionResponse;
}

export interface Introduction {
  id: string;
  introducer: UserRef;
  participants: IntroductionParticipant[];
  message: string;
  status: IntroductionResponse;
  /** Present only once every participant has accepted. */
  conversation_id?: string;
  created_at: string;
}

export interface IntroductionAnswer {
  id: string;
  status: IntroductionResponse;
  conversation_id?: string;
}

export interface ContactRequest {
  id: string;
  requester: UserRef;
  recipient: UserRef;
  status: 'pending' | 'accepted';
  created_at: string;
}

/** An incoming contact request (`GET /contacts/requests/pending`). */
export interface PendingContactRequest {
  id: string;
  requester: UserRef;
  created_at: string;
}

export interface Contact {
  id: string;
  contact: UserRef;
  created_at: string;
}

export interface ContactCheck {
  is_contact: boolean;
  user: { id: string; display_name: string };
}

/** The error body of every non-2xx answer. */
export interface ErrorBody {
  error: {
    code: string;
    message: string;
    details?: Array<{ path: string; message: string }>;
    retry_after?: number;
  };
}

/** Options of one call. */
export interface CallOptions {
  /**
   * Idempotency-Key of a POST (1–255 chars). Without one the client makes a random key per call,
   * so its own retries never repeat an effect; give a stable key to survive a restart too.
   */
  idempotencyKey?: string;
  signal?: AbortSignal;
}
