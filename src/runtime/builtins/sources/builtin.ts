import { requestOptions } from './request-options.js';
import type { Introduction, Transaction } from '../../../client/types.js';
import type { SourceDef } from '../../contract/types.js';
import { byServerTime, messagesSource } from './messages.js';
import { msOf, pendingSource } from './pending.js';
import { watchSource } from './watch.js';

const pendingTransfers = pendingSource({
  name: 'pending_transfers',
  description: 'incoming transfers awaiting the bot (GET /wallet/pending)',
  type: 'transfer.received',
  topics: ['wallet'],
  list: async (ctx) => (await ctx.api.wallet.pending(requestOptions(ctx))).pending_transactions,
});

const sentTransfers = watchSource<Transaction>({
  name: 'sent_transfers',
  description: "the bot's outgoing transfers being accepted or declined (GET /wallet/transactions)",
  page: async (ctx, before) => {
    const r = await ctx.api.wallet.transactions({ limit: 200, before }, requestOptions(ctx));
    return { items: r.transactions, has_more: r.has_more };
  },
  relevant: (t) => t.type === 'transfer' && t.direction === 'sent',
  isOpen: (t) => t.status === 'pending',
  changedAt: (t) => msOf(t.updated_at),
  topics: ['wallet'],
  event: (t) => ({ key: `transfer.${t.status}:${t.id}`, type: `transfer.${t.status}`, payload: { ...t } }),
});

const pendingIntroductions = pendingSource({
  name: 'pending_introductions',
  description: 'introductions awaiting the bot (GET /introductions/pending)',
  type: 'introduction.received',
  topics: ['introductions'],
  list: async (ctx) => (await ctx.api.introductions.pending(requestOptions(ctx))).introductions,
});

const introductions = watchSource<Introduction>({
  name: 'introductions',
  description: 'introductions the bot made or is in, completing (GET /introductions)',
  // GET /introductions has no paging: one page holds them all.
  page: async (ctx) => {
    const r = await ctx.api.introductions.list(requestOptions(ctx));
    return { items: [...r.introductions].sort((a, b) => (a.id < b.id ? 1 : -1)), has_more: false };
  },
  relevant: () => true,
  isOpen: (i) => i.status === 'pending',
  // an introduction has no time of completion: its creation time stands for it
  changedAt: (i) => msOf(i.created_at),
  topics: ['introductions'],
  event: (i) =>
    i.status === 'accepted'
      ? { key: `introduction.completed:${i.id}`, type: 'introduction.completed', payload: { ...i } }
      : undefined,
});

const contactRequests = pendingSource({
  name: 'contact_requests',
  description: 'incoming contact requests (GET /contacts/requests/pending)',
  type: 'contact_request.received',
  topics: ['contacts'],
  list: async (ctx) => (await ctx.api.contacts.pendingRequests(requestOptions(ctx))).requests,
});

/** `contact.added`: contacts that were not there at the last poll (GET /contacts). */
const contacts: SourceDef = {
  name: 'contacts',
  description: 'new entries in the contact list (GET /contacts)',
  topics: ['contacts'],
  readsFromBaseline: true,
  async poll(ctx, raw) {
    const known = raw ? new Set((raw as { known: string[] }).known) : undefined;
    const { contacts: list } = await ctx.api.contacts.list(requestOptions(ctx));
    // first poll: contacts added after the bot started are events, older ones are history
    const isNew = (c: (typeof list)[number]) =>
      known ? !known.has(c.id) : ctx.baseline !== undefined && (msOf(c.created_at) ?? 0) > ctx.baseline;
    const events = list
      .filter(isNew)
      .map((c) => ({
        key: `contact.added:${c.id}`,
        type: 'contact.added',
        ts: msOf(c.created_at),
        payload: { ...c } as Record<string, unknown>,
      }))
      .sort(byServerTime);
    return { events, cursor: { known: list.map((c) => c.id) } };
  },
};

/** `balance.changed`: the balance differs from the last poll (transfers, UBI, grants). */
const balance: SourceDef = {
  name: 'balance',
  description: 'changes of the wallet balance (GET /wallet/balance)',
  topics: ['wallet'],
  async poll(ctx, raw) {
    const prev = raw as { balance: number; seq: number } | undefined;
    const { balance: now } = await ctx.api.wallet.balance(requestOptions(ctx));
    if (!prev) return { events: [], cursor: { balance: now, seq: 0 } };
    if (now === prev.balance) return { events: [], cursor: prev };
    const seq = prev.seq + 1;
    const delta = Math.round((now - prev.balance) * 100) / 100;
    return {
      events: [
        {
          key: `balance.changed:${seq}`,
          type: 'balance.changed',
          ts: ctx.clock.now(),
          payload: { balance: now, previous: prev.balance, delta },
        },
      ],
      cursor: { balance: now, seq },
    };
  },
};

/** Every built-in poll source. */
export const builtinSources: SourceDef[] = [
  messagesSource,
  pendingTransfers,
  sentTransfers,
  pendingIntroductions,
  introductions,
  contactRequests,
  contacts,
  balance,
];
