import type { BotEvent, SourceContext, SourceDef } from '../../contract/types.js';
import { byServerTime } from './messages.js';
import type { Topic } from '../../contract/types.js';

interface WatchCursor {
  /** Newest id seen (ids are time-sortable, API.md). */
  newest: string;
  /** Ids still open (pending) that may yet change state. */
  open: string[];
}

/**
 * A source that watches items change state in a newest-first list (outgoing transfers being
 * answered, introductions completing). Each poll reads pages until it is past the newest id of
 * the last poll and has found every open item, so an item that appeared and settled between two
 * polls counts, and so does an old one answered late. Open items deeper than `maxPages` pages
 * are given up (logged). The first poll takes a baseline: open items are remembered, and items
 * that settled after the bot started (`ctx.baseline`) are events.
 */
export function watchSource<T extends { id: string }>(o: {
  name: string;
  description: string;
  /** One page, newest first, of items older than `before`. */
  page: (ctx: SourceContext, before: string | undefined) => Promise<{ items: T[]; has_more: boolean }>;
  /** Items this source watches (e.g. outgoing transfers only). */
  relevant: (item: T, ctx: SourceContext) => boolean;
  isOpen: (item: T) => boolean;
  /** The event of a settled item, or undefined when that outcome is not an event. */
  event: (item: T) => Omit<BotEvent, 'at'> | undefined;
  /** When the item last changed (ms): at the first poll, items settled after the baseline are events. */
  changedAt?: (item: T) => number | undefined;
  topics?: Topic[];
  maxPages?: number;
}): SourceDef {
  const maxPages = o.maxPages ?? 3;
  return {
    name: o.name,
    description: o.description,
    topics: o.topics,
    readsFromBaseline: o.changedAt !== undefined,
    async poll(ctx, raw) {
      const cursor = raw as WatchCursor | undefined;
      const baseline = cursor === undefined;
      const prevNewest = cursor?.newest ?? '';
      const open = new Set(cursor?.open ?? []);
      const missing = new Set(open);
      const stillOpen = new Set<string>();
      const events: Array<Omit<BotEvent, 'at'>> = [];
      let newest = prevNewest;
      let before: string | undefined;
      for (let n = 0; n < maxPages; n++) {
        const { items, has_more } = await o.page(ctx, before);
        for (const it of items) {
          if (it.id > newest) newest = it.id;
          if (!o.relevant(it, ctx)) continue;
          // at the first poll, an item that changed after the bot started is not history
          const recent = baseline && ctx.baseline !== undefined && (o.changedAt?.(it) ?? 0) > ctx.baseline;
          const watched = (!baseline && it.id > prevNewest) || open.has(it.id) || recent;
          missing.delete(it.id);
          if (o.isOpen(it)) {
            if (baseline || watched) stillOpen.add(it.id);
          } else if (watched) {
            const ev = o.event(it);
            if (ev) events.push({ ...ev, ts: ev.ts ?? o.changedAt?.(it) });
          }
        }
        const last = items[items.length - 1];
        if (!has_more || !last) break;
        before = last.id;
        if (!baseline && last.id <= prevNewest && missing.size === 0) break;
      }
      if (missing.size)
        ctx.log.warn(
          { source: o.name, ids: [...missing] },
          `${missing.size} open item(s) are older than ${maxPages} pages; no longer watched`,
        );
      events.sort(byServerTime);
      return { events, cursor: { newest, open: [...stillOpen] } satisfies WatchCursor };
    },
  };
}
