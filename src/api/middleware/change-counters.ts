import { commitFeedOf } from '../../store/core/commit-signal.js';
import type { Store } from '../../store/core/types.js';
import { usersTouched } from '../../domain/users-touched.js';

/**
 * Collections no conditional read shows (idempotency records, keys, bot and plugin state, the
 * server clock): their writes change no user's lists. Bots write their cursors at every poll,
 * so these must not move every validator. (test/api/conditional-flood.test.ts checks each name
 * is a collection of the data directory.)
 */
export const UNSHOWN: ReadonlySet<string> = new Set(['idempotency', 'api_keys', 'bot_keys', 'bot_leases', 'bot_workers', 'bot_meta', 'bot_cursors', 'bot_inbox', 'plugin_state', 'server_clock']);

/**
 * A counter per user that moves whenever a commit may have changed what that user's lists show,
 * and an epoch that moves for every user at once: a cheap validator of a conditional read,
 * read without building the list (issue 21 item 2). It errs on the side of moving: a write
 * of a collection it does not know, a user record (display names appear in other users'
 * lists), a new conversation or one written by another process (whose `before` is unknown, so
 * a member who left cannot be told), and a delete it cannot attribute all move the epoch.
 */
export class ChangeCounters {
  private epoch = 0;
  private readonly counts = new Map<string, number>();

  /** The counters of a store that reports its commits, else undefined (no cheap validator). */
  static of(store: Store): ChangeCounters | undefined {
    const feed = commitFeedOf(store);
    if (!feed) return undefined;
    const counters = new ChangeCounters();
    feed.subscribe((writes, read) => {
      const users = new Set<string>();
      let all = false;
      for (const w of writes) {
        if (UNSHOWN.has(w.collection)) continue;
        if (w.collection === 'conversations' && !w.before) {
          all = true;
          continue;
        }
        const add = (id: string) => void users.add(id);
        const known = [w.before, w.after].filter((r) => r !== null).map((r) => usersTouched(w, read, add, r));
        if (!known.length || known.includes(false)) all = true;
      }
      if (all) counters.epoch++;
      else for (const id of users) counters.counts.set(id, (counters.counts.get(id) ?? 0) + 1);
    });
    return counters;
  }

  /** What a user's lists were computed at: equal values, equal lists (for the same request). */
  version(userId: string): string {
    return `${this.epoch}.${this.counts.get(userId) ?? 0}`;
  }
}
