import type { ChangeFeed } from '../runtime/index.js';
import { commitFeedOf } from '../store/core/commit-signal.js';
import type { Store } from '../store/core/types.js';
import { usersTouched, type Topic } from '../domain/users-touched.js';

/**
 * What each commit of the embedded server changed for whom: messages and conversations concern
 * their participants (`messages`), transactions and balances their parties (`wallet`),
 * introductions the introducer and participants (`introductions`), contact requests and
 * contacts both users (`contacts`). Bots subscribe by user and poll the matching sources at
 * once; undefined when the store does not report its commits. Each call makes a feed of its own
 * (one commit subscription): the deployment that asks for it (bot-deployment.ts) holds it, so no
 * hidden table ties a feed to its store.
 *
 * @example userChanges(store)?.subscribe(me.id, (topics) => loop.wake(sourcesFor(topics)))
 */
export function userChanges(store: Store): ChangeFeed | undefined {
  const commits = commitFeedOf(store);
  if (!commits) return undefined;
  const listeners = new Map<string, Set<(topics: ReadonlySet<string>, byKey?: string) => void>>();
  commits.subscribe((writes, read, cause) => {
    if (listeners.size === 0) return;
    const byUser = new Map<string, Set<Topic>>();
    for (const w of writes) {
      usersTouched(w, read, (id, topic) => {
        if (!listeners.has(id)) return;
        let s = byUser.get(id);
        if (!s) byUser.set(id, (s = new Set()));
        s.add(topic);
      });
    }
    const byKey = typeof cause === 'string' ? cause : undefined;
    for (const [id, topics] of byUser) for (const l of listeners.get(id) ?? []) l(topics, byKey);
  });
  const feed: ChangeFeed = {
    subscribe(userId, listener) {
      let set = listeners.get(userId);
      if (!set) listeners.set(userId, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(userId);
      };
    },
  };
  return feed;
}
