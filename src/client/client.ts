import { Http, type HttpOptions, type RequestOptions } from './http.js';
import type { RequestKind } from './rate-budget.js';
import type {
  Balance,
  CallOptions,
  Contact,
  ContactCheck,
  ContactRequest,
  Conversation,
  ConversationPage,
  CreateConversationInput,
  InboxPage,
  Introduction,
  IntroductionAnswer,
  Message,
  MessagePage,
  PendingContactRequest,
  PendingTransaction,
  Profile,
  SendMoneyInput,
  Subscription,
  Transaction,
  TransactionResult,
} from './types.js';

export type ClientOptions = HttpOptions;

/** Options of a read: `kind: 'poll'` marks background polling (paced, lower priority). */
export interface ReadOptions {
  signal?: AbortSignal;
  kind?: RequestKind;
}

const post = (o?: CallOptions): RequestOptions => ({ idempotencyKey: o?.idempotencyKey, signal: o?.signal });
const get = (o?: ReadOptions): RequestOptions => ({ signal: o?.signal, kind: o?.kind ?? 'action' });

/** The typed client of `/api/v1` (see createClient). */
export type Client = ReturnType<typeof createClient>;

/**
 * A typed client of every `/api/v1` endpoint, with a rate budget that reads the server's
 * `RateLimit` headers, waits out 429s, backs off on 5xx and network errors, and sends an
 * `Idempotency-Key` with every POST. A 401 throws `UnauthorizedError` at once.
 *
 * @example
 * import { createClient } from 'pinbot';
 * const api = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: process.env.KEY! });
 * const { pending_transactions } = await api.wallet.pending();
 * for (const t of pending_transactions) await api.wallet.accept(t.id, { idempotencyKey: `accept-${t.id}` });
 */
export function createClient(options: ClientOptions) {
  const http = new Http(options);
  return {
    /** The transport (budget, base URL) for advanced use. */
    http,
    /** `GET /me`. */
    me: (o?: ReadOptions) => http.request<Profile>('GET', '/me', get(o)),
    wallet: {
      balance: (o?: ReadOptions) => http.request<Balance>('GET', '/wallet/balance', get(o)),
      subscription: (o?: ReadOptions) => http.request<Subscription>('GET', '/wallet/subscription', get(o)),
      send: (input: SendMoneyInput, o?: CallOptions) =>
        http.request<TransactionResult>('POST', '/wallet/send', { ...post(o), body: input }),
      /** Newest first; `before` is a transaction id. */
      transactions: (q: { limit?: number; before?: string } = {}, o?: ReadOptions) =>
        http.request<{ transactions: Transaction[]; has_more: boolean }>('GET', '/wallet/transactions', {
          ...get(o),
          query: q,
        }),
      pending: (o?: ReadOptions) =>
        http.request<{ pending_transactions: PendingTransaction[] }>('GET', '/wallet/pending', get(o)),
      accept: (id: string, o?: CallOptions) =>
        http.request<TransactionResult>('POST', '/wallet/transactions/:id/accept', { ...post(o), params: { id } }),
      decline: (id: string, o?: CallOptions) =>
        http.request<TransactionResult>('POST', '/wallet/transactions/:id/decline', { ...post(o), params: { id } }),
    },
    messages: {
      /** Direct message by PIN (reuses or creates the direct conversation). */
      send: (input: { recipient_pin: string; content: string }, o?: CallOptions) =>
        http.request<Message>('POST', '/messages/send', { ...post(o), body: input }),
      /**
       * `GET /messages` (pinbot extension): new messages across all your conversations, in the
       * order they were written. First `{ since }` (a timestamp), then `{ after: next_after }`.
       */
      inbox: (q: { since?: number; after?: string; limit?: number } = {}, o?: ReadOptions) =>
        http.request<InboxPage>('GET', '/messages', { ...get(o), query: q }),
    },
    conversations: {
      /**
       * Every conversation of yours, most recent activity first, read page by page (50, then
       * 200 a page). `stopAfter` ends the reading early at the first conversation it accepts (e.g. one
       * whose last activity is older than what the caller has already seen); that one is included.
       */
      list: async (
        o?: ReadOptions & { stopAfter?: (c: Conversation) => boolean },
      ): Promise<{ conversations: Conversation[] }> => {
        const conversations: Conversation[] = [];
        let before: string | undefined;
        for (;;) {
          // The first request has no query, as the spec shows it: a server without paging (the
          // hosted service) answers everything at once, and has_more is absent.
          const page = await http.request<ConversationPage>('GET', '/conversations', {
            ...get(o),
            query: before === undefined ? {} : { limit: 200, before },
          });
          for (const c of page.conversations) {
            conversations.push(c);
            if (o?.stopAfter?.(c)) return { conversations };
          }
          if (!page.has_more || !page.next_before) return { conversations };
          before = page.next_before;
        }
      },
      /** One page of `GET /conversations` (extension): `before` is the `next_before` of the previous page. */
      page: (q: { limit?: number; before?: string } = {}, o?: ReadOptions) =>
        http.request<ConversationPage>('GET', '/conversations', { ...get(o), query: q }),
      /** Leave a group (extension). */
      leave: (id: string, o?: CallOptions) =>
        http.request<{ message: string }>('POST', '/conversations/:id/leave', { ...post(o), params: { id } }),
      create: (input: CreateConversationInput, o?: CallOptions) =>
        http.request<Conversation>('POST', '/conversations', { ...post(o), body: input }),
      get: (id: string, o?: ReadOptions) =>
        http.request<Conversation>('GET', '/conversations/:id', { ...get(o), params: { id } }),
      /** Oldest first; poll with the `timestamp` of the last page as `since`. */
      messages: (id: string, q: { since?: number; limit?: number } = {}, o?: ReadOptions) =>
        http.request<MessagePage>('GET', '/conversations/:id/messages', { ...get(o), params: { id }, query: q }),
      send: (id: string, input: { content: string }, o?: CallOptions) =>
        http.request<Message>('POST', '/conversations/:id/messages', { ...post(o), params: { id }, body: input }),
    },
    introductions: {
      create: (input: { participant_pins: string[]; message?: string }, o?: CallOptions) =>
        http.request<Introduction>('POST', '/introductions', { ...post(o), body: input }),
      list: (o?: ReadOptions) => http.request<{ introductions: Introduction[] }>('GET', '/introductions', get(o)),
      pending: (o?: ReadOptions) =>
        http.request<{ introductions: Introduction[] }>('GET', '/introductions/pending', get(o)),
      accept: (id: string, o?: CallOptions) =>
        http.request<IntroductionAnswer>('POST', '/introductions/:id/accept', { ...post(o), params: { id } }),
      decline: (id: string, o?: CallOptions) =>
        http.request<IntroductionAnswer>('POST', '/introductions/:id/decline', { ...post(o), params: { id } }),
    },
    contacts: {
      list: (o?: ReadOptions) => http.request<{ contacts: Contact[] }>('GET', '/contacts', get(o)),
      request: (input: { pin_code: string }, o?: CallOptions) =>
        http.request<ContactRequest>('POST', '/contacts/request', { ...post(o), body: input }),
      pendingRequests: (o?: ReadOptions) =>
        http.request<{ requests: PendingContactRequest[] }>('GET', '/contacts/requests/pending', get(o)),
      acceptRequest: (id: string, o?: CallOptions) =>
        http.request<{ message: string; contact: Contact }>('POST', '/contacts/requests/:id/accept', {
          ...post(o),
          params: { id },
        }),
      declineRequest: (id: string, o?: CallOptions) =>
        http.request<{ message: string }>('POST', '/contacts/requests/:id/decline', { ...post(o), params: { id } }),
      remove: (id: string, o?: { signal?: AbortSignal }) =>
        http.request<{ message: string }>('DELETE', '/contacts/:id', { signal: o?.signal, params: { id } }),
      check: (pin: string, o?: ReadOptions) =>
        http.request<ContactCheck>('GET', '/contacts/check/:pin', { ...get(o), params: { pin } }),
    },
  };
}
