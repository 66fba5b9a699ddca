import { ApiRequestError } from '../../../client/errors.js';
import { requestOptions } from './request-options.js';
import type { Client } from '../../../client/client.js';
import type { Conversation, Message } from '../../../client/types.js';
import type { BotEvent, SourceContext, SourceDef } from '../../contract/types.js';
import { byServerTime } from '../../contract/event-order.js';

export { byServerTime };

/**
 * Where the source stands. `after`: the `next_after` of `GET /messages` (one read across every
 * conversation). `since`: per conversation, the `timestamp` to poll from — the per-conversation
 * reads of a server without `GET /messages` (the spec's), and what bots stored before it; while
 * `after` is set, `since` only filters the first reads after the move (nothing seen twice).
 */
interface MessagesCursor {
  after?: string;
  since?: Record<string, number>;
}

type Found = { events: Array<Omit<BotEvent, 'at'>>; cursor: MessagesCursor; more?: boolean };

/** Pages of `GET /messages` read per poll; when more remain, the poll says so and goes again. */
const MAX_PAGES = 5;
/**
 * A poll reads no further page once this long has passed (clock ms): it hands on what it has and
 * goes again, well within `runtime.step_timeout` on a slow or busy server.
 */
const POLL_BUDGET_MS = 2_000;
/** Pages read per conversation per poll on a server without `GET /messages`. */
const MAX_PAGES_EACH = 5;

/** Clients of servers that answered `GET /messages` with 404 (the spec's has none). Internal. */
const withoutInbox = new WeakSet<Client>();

/**
 * `message.received`: new messages in every conversation of the bot, read with one request
 * across conversations (`GET /messages`, a pinbot extension: its cursor never misses or repeats
 * a message) — one read per poll whatever the number of conversations. Against a server without
 * it, `GET /conversations` tells which conversations changed and each is read with `since`. The
 * bot's own messages move the cursor but are not events. The first poll reads from the bot's
 * start (the baseline): older messages are history, newer ones are events. Events come out in
 * the order the server wrote them.
 */
export const messagesSource: SourceDef = {
  name: 'messages',
  description: 'new messages in every conversation of the bot',
  topics: ['messages'],
  readsFromBaseline: true,
  async poll(ctx, raw) {
    const cursor = raw as MessagesCursor | undefined;
    if (!withoutInbox.has(ctx.api)) {
      try {
        return await readInbox(ctx, cursor);
      } catch (err) {
        // a server without the extension: 404 for the route, as for any unknown one (pinbot's
        // `not_found`; another server's body may have no code)
        const missing = err instanceof ApiRequestError && err.status === 404 && /^(not_found|http_404)$/.test(err.code);
        if (!missing) throw err;
        withoutInbox.add(ctx.api);
      }
    }
    return readEach(ctx, cursor);
  },
};

/** The bot's new messages through `GET /messages`, up to MAX_PAGES pages or POLL_BUDGET_MS. Internal. */
async function readInbox(ctx: SourceContext, cursor: MessagesCursor | undefined): Promise<Found> {
  // moving from per-conversation cursors: read from the oldest, skip what each had seen
  const seen = cursor?.since;
  let q: { since?: number; after?: string } = cursor?.after
    ? { after: cursor.after }
    : { since: cursor?.since ? oldest(cursor.since) : (ctx.baseline ?? Number.MAX_SAFE_INTEGER) };
  const events: Array<Omit<BotEvent, 'at'>> = [];
  const until = ctx.clock.now() + POLL_BUDGET_MS;
  for (let n = 0; n < MAX_PAGES && (n === 0 || ctx.clock.now() < until); n++) {
    const page = await ctx.api.messages.inbox({ ...q, limit: 200 }, requestOptions(ctx));
    const convs = new Map(page.conversations.map((c) => [c.id, c]));
    for (const m of page.messages) {
      if (m.sender.id === ctx.me.id || m.timestamp <= (seen?.[m.conversation_id] ?? -1)) continue;
      events.push(eventOf(m, convs.get(m.conversation_id)));
    }
    q = { after: page.next_after };
    if (!page.has_more) return { events, cursor: { after: page.next_after } };
  }
  return { events, cursor: { after: q.after, ...(seen ? { since: seen } : {}) }, more: true };
}

/** The oldest position of per-conversation cursors (0 when there is none). Internal. */
function oldest(since: Record<string, number>): number {
  const t = Object.values(since).filter((v) => v > 0);
  return t.length ? Math.min(...t) : 0;
}

/**
 * A server without `GET /messages`: `GET /conversations` tells which conversations changed
 * (their last message is newer than the cursor); only those are read, with `since`. Internal.
 */
async function readEach(ctx: SourceContext, cursor: MessagesCursor | undefined): Promise<Found> {
  const since: Record<string, number> = { ...(cursor?.since ?? {}) };
  const { conversations } = await ctx.api.conversations.list(requestOptions(ctx));
  const events: Array<Omit<BotEvent, 'at'>> = [];
  for (const conv of conversations) {
    const last = conv.last_message?.timestamp ?? 0;
    // first poll: history is what came before the bot started (or everything, without a baseline)
    const from = cursor ? (since[conv.id] ?? 0) : Math.min(last, ctx.baseline ?? last);
    if (last <= from) {
      since[conv.id] = from;
      continue;
    }
    let t = from;
    for (let n = 0; n < MAX_PAGES_EACH; n++) {
      const page = await ctx.api.conversations.messages(conv.id, { since: t, limit: 200 }, requestOptions(ctx));
      for (const m of page.messages) if (m.sender.id !== ctx.me.id) events.push(eventOf(m, conv));
      t = page.timestamp;
      if (!page.has_more) break;
    }
    since[conv.id] = t;
  }
  events.sort(byServerTime);
  return { events, cursor: { since } };
}

/** A message as the bot's `message.received` event. Internal. */
function eventOf(m: Message, conv: Conversation | undefined): Omit<BotEvent, 'at'> {
  return {
    key: `message.received:${m.id}`,
    type: 'message.received',
    ts: m.timestamp,
    payload: { ...m, conversation: conv ? summary(conv) : { id: m.conversation_id } },
  };
}

function summary(c: Conversation) {
  return { id: c.id, type: c.type, name: c.name, participants: c.participants };
}
