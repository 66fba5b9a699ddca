import type { SourceContext, SourceDef } from '../../contract/types.js';
import { byServerTime } from './messages.js';
import type { Topic } from '../../contract/types.js';

/** Milliseconds of an ISO time, or undefined. Internal. */
export const msOf = (iso: unknown): number | undefined => {
  const t = typeof iso === 'string' ? Date.parse(iso) : NaN;
  return Number.isFinite(t) ? t : undefined;
};

/**
 * A source over a list of items that wait for the bot's answer (pending transfers, contact
 * requests, introductions). Each item is one event; the cursor is the set of ids already queued,
 * pruned to what is still pending, so it stays as small as the list. Items pending at the first
 * poll are events too: they still wait for an answer.
 *
 * @example pendingSource({ name: 'pending_transfers', type: 'transfer.received', list: (c) => … })
 */
export function pendingSource<T extends { id: string; created_at?: string }>(o: {
  name: string;
  description: string;
  type: string;
  topics?: Topic[];
  list: (ctx: SourceContext) => Promise<T[]>;
}): SourceDef {
  return {
    name: o.name,
    description: o.description,
    topics: o.topics,
    async poll(ctx, cursor) {
      const seen = new Set((cursor as { seen?: string[] } | undefined)?.seen ?? []);
      const items = await o.list(ctx);
      const events = items
        .filter((it) => !seen.has(it.id))
        .map((it) => ({
          key: `${o.type}:${it.id}`,
          type: o.type,
          ts: msOf(it.created_at),
          payload: { ...it } as Record<string, unknown>,
        }))
        .sort(byServerTime);
      return { events, cursor: { seen: items.map((it) => it.id) } };
    },
  };
}
