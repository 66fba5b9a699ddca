import { BotInbox, type InboxEntry, type InboxFeed } from '../runtime/index.js';
import type { CommitFeed } from '../store/core/commit-signal.js';

/**
 * The entries that appear in bots' inboxes, by bot, from the store's commit feed (this
 * process's commits and, on PostgreSQL, the other processes' once applied here). A bot's owner
 * hears of the pushes another process queued for it.
 */
export function inboxFeed(commits: CommitFeed): InboxFeed {
  const listeners = new Map<string, Set<(entryId: string) => void>>();
  commits.subscribe((writes) => {
    if (listeners.size === 0) return;
    for (const w of writes) {
      if (w.collection !== BotInbox.name || !w.after || w.before) continue;
      for (const l of listeners.get((w.after as InboxEntry).bot) ?? []) l(w.id);
    }
  });
  return {
    subscribe(bot, onEntry) {
      let set = listeners.get(bot);
      if (!set) listeners.set(bot, (set = new Set()));
      set.add(onEntry);
      return () => {
        set!.delete(onEntry);
        if (set!.size === 0 && listeners.get(bot) === set) listeners.delete(bot);
      };
    },
  };
}
