import type { CommitFeed, CommittedWrite } from '../../store/core/commit-signal.js';
import type { ReadView } from '../../store/core/types.js';
import { usersTouched } from '../../domain/users-touched.js';

/**
 * Collections no conditional read shows (idempotency records, keys, bot and plugin state, the
 * server clock): their writes change no user's lists. Bots write their cursors at every poll,
 * so these must not move every validator. (test/api/conditional-flood.test.ts checks each name
 * is a collection of the data directory.)
 */
export const UNSHOWN: ReadonlySet<string> = new Set([
  'idempotency',
  'api_keys',
  'bot_keys',
  'bot_leases',
  'bot_workers',
  'bot_meta',
  'bot_cursors',
  'bot_inbox',
  'bot_dialogs',
  'plugin_state',
  'bot_memory',
  'server_clock',
  'user_usage',
]);

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
  /** Per user: the counter, and the commit that last moved it (so a commit moves it once). */
  private readonly counts = new Map<string, { n: number; commit: number }>();
  private commits = 0;
  /**
   * The users the commit being noted concerns (with repeats), reused from commit to commit:
   * the listener runs once per write request, and a Set, closures and arrays per commit were
   * ~1 kB of garbage per write (bench/tools/write-core.ts).
   */
  private readonly touched: string[] = [];
  /** How many of `touched` this commit filled (the array is not emptied: that frees its store). */
  private filled = 0;
  private readonly add = (id: string): void => void (this.touched[this.filled++] = id);

  /** The counters of a store's commits, as `feed` tells of them. */
  static of(feed: CommitFeed): ChangeCounters {
    const counters = new ChangeCounters();
    feed.subscribe((writes, read) => counters.note(writes, read));
    return counters;
  }

  /** Moves the counters of the users a commit concerns, or the epoch when it cannot tell. */
  private note(writes: readonly CommittedWrite[], read: ReadView): void {
    this.filled = 0;
    let all = false;
    for (let i = 0; i < writes.length && !all; i++) {
      const w = writes[i]!;
      if (UNSHOWN.has(w.collection)) continue;
      if (w.collection === 'conversations' && !w.before) {
        all = true;
        continue;
      }
      // the users of the record before the write and after it (a member who left is told too)
      if (!w.before && !w.after) all = true;
      if (w.before && !usersTouched(w, read, this.add, w.before)) all = true;
      if (w.after && !usersTouched(w, read, this.add, w.after)) all = true;
    }
    if (all) this.epoch++;
    else {
      const commit = ++this.commits;
      const touched = this.touched;
      for (let i = 0; i < this.filled; i++) {
        const id = touched[i]!;
        const c = this.counts.get(id);
        if (!c) this.counts.set(id, { n: 1, commit });
        else if (c.commit !== commit) {
          c.n++;
          c.commit = commit;
        }
      }
    }
    // a commit that touched many users (a grant to everyone) does not keep a long list alive
    if (this.filled > 1024) this.touched.length = 0;
  }

  /** What a user's lists were computed at: equal values, equal lists (for the same request). */
  version(userId: string): string {
    return `${this.epoch}.${this.counts.get(userId)?.n ?? 0}`;
  }
}
