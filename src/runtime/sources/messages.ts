import type { Conversation } from '../../client/types.js';
import type { BotEvent, SourceDef } from '../types.js';

interface MessagesCursor {
  /** Per conversation: the `timestamp` to poll from (API.md: never misses, never repeats). */
  since: Record<string, number>;
}

/** Pages read per conversation per poll; a longer backlog continues at the next poll. */
const MAX_PAGES = 5;

/**
 * `message.received`: one `GET /conversations` tells which conversations changed (their last
 * message is newer than the cursor); only those are read, with `since`. The bot's own messages
 * move the cursor but are not events. The first poll takes a baseline (history is not replayed).
 */
export const messagesSource: SourceDef = {
  name: 'messages',
  description: 'new messages in every conversation of the bot',
  async poll(ctx, raw) {
    const cursor = raw as MessagesCursor | undefined;
    const since: Record<string, number> = { ...(cursor?.since ?? {}) };
    const { conversations } = await ctx.api.conversations.list({ signal: ctx.signal, kind: 'poll' });
    const events: Array<Omit<BotEvent, 'at'>> = [];
    for (const conv of conversations) {
      const last = conv.last_message?.timestamp ?? 0;
      if (!cursor) {
        since[conv.id] = last;
        continue;
      }
      const from = since[conv.id] ?? 0; // a conversation new since the last poll is read whole
      if (last <= from) {
        since[conv.id] = from;
        continue;
      }
      let t = from;
      for (let n = 0; n < MAX_PAGES; n++) {
        const page = await ctx.api.conversations.messages(conv.id, { since: t, limit: 200 }, { signal: ctx.signal, kind: 'poll' });
        for (const m of page.messages) {
          if (m.sender.id === ctx.me.id) continue;
          events.push({ key: `message.received:${m.id}`, type: 'message.received', payload: { ...m, conversation: summary(conv) } });
        }
        t = page.timestamp;
        if (!page.has_more) break;
      }
      since[conv.id] = t;
    }
    return { events, cursor: { since } satisfies MessagesCursor };
  },
};

function summary(c: Conversation) {
  return { id: c.id, type: c.type, name: c.name, participants: c.participants };
}
