import { requestOptions } from './request-options.js';
import type { Conversation } from '../../../client/types.js';
import type { BotEvent, SourceContext, SourceDef } from '../../contract/types.js';
import { byServerTime } from '../../contract/event-order.js';

export { byServerTime };

interface MessagesCursor {
  /** Per conversation: the `timestamp` to poll from (API.md: never misses, never repeats). */
  since: Record<string, number>;
}

/** Pages read per conversation per poll; a longer backlog continues at the next poll. */
const MAX_PAGES = 5;

/** Conversations the bot is in (paged when the server pages them). Internal. */
async function allConversations(ctx: SourceContext): Promise<Conversation[]> {
  const { conversations } = await ctx.api.conversations.list(requestOptions(ctx));
  return conversations;
}

/**
 * `message.received`: one `GET /conversations` tells which conversations changed (their last
 * message is newer than the cursor); only those are read, with `since`. The bot's own messages
 * move the cursor but are not events. The first poll reads from the bot's start (the baseline):
 * older messages are history, newer ones are events. Events come out in server time order
 * (oldest first), across conversations.
 */
export const messagesSource: SourceDef = {
  name: 'messages',
  description: 'new messages in every conversation of the bot',
  topics: ['messages'],
  readsFromBaseline: true,
  async poll(ctx, raw) {
    const cursor = raw as MessagesCursor | undefined;
    const since: Record<string, number> = { ...(cursor?.since ?? {}) };
    const conversations = await allConversations(ctx);
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
      for (let n = 0; n < MAX_PAGES; n++) {
        const page = await ctx.api.conversations.messages(conv.id, { since: t, limit: 200 }, requestOptions(ctx));
        for (const m of page.messages) {
          if (m.sender.id === ctx.me.id) continue;
          events.push({
            key: `message.received:${m.id}`,
            type: 'message.received',
            ts: m.timestamp,
            payload: { ...m, conversation: summary(conv) },
          });
        }
        t = page.timestamp;
        if (!page.has_more) break;
      }
      since[conv.id] = t;
    }
    events.sort(byServerTime);
    return { events, cursor: { since } satisfies MessagesCursor };
  },
};

function summary(c: Conversation) {
  return { id: c.id, type: c.type, name: c.name, participants: c.participants };
}
