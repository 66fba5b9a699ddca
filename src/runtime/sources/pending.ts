import type { SourceContext, SourceDef } from '../types.js';

/**
 * A source over a list of items that wait for the bot's answer (pending transfers, contact
 * requests, introductions). Each item is one event; the cursor is the set of ids already queued,
 * pruned to what is still pending, so it stays as small as the list. Items pending at the first
 * poll are events too: they still wait for an answer.
 *
 * @example pendingSource({ name: 'pending_transfers', type: 'transfer.received', list: (c) => … })
 */
export function pendingSource<T extends { id: string }>(o: {
  name: string;
  description: string;
  type: string;
  list: (ctx: SourceContext) => Promise<T[]>;
}): SourceDef {
  return {
    name: o.name,
    description: o.description,
    async poll(ctx, cursor) {
      const seen = new Set((cursor as { seen?: string[] } | undefined)?.seen ?? []);
      const items = await o.list(ctx);
      const events = items
        .filter((it) => !seen.has(it.id))
        .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .map((it) => ({ key: `${o.type}:${it.id}`, type: o.type, payload: { ...it } as Record<string, unknown> }));
      return { events, cursor: { seen: items.map((it) => it.id) } };
    },
  };
}
