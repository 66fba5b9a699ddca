import type { ChangeFeed, Topic } from '../runtime/index.js';
import type { CommitFeed } from '../store/core/commit-signal.js';
import { usersTouched, type ChangeTopic as DomainTopic } from '../domain/users-touched.js';

/** The runtime's topics are the domain's, both ways (a topic added to one only fails to compile). Internal. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const topicsAgree: Same<Topic, DomainTopic> = true;
void topicsAgree;

/**
 * What each commit of the embedded server changed for whom: messages and conversations concern
 * their participants (`messages`), transactions and balances their parties (`wallet`),
 * introductions the introducer and participants (`introductions`), contact requests and
 * contacts both users (`contacts`). Bots subscribe by user and poll the matching sources at
 * once. Each call makes a feed of its own (one commit subscription), held by the deployment that
 * asks for it (bot-deployment.ts).
 *
 * @example userChanges(commits).subscribe(me.id, (topics) => loop.wake(sourcesFor(topics)))
 */
export function userChanges(commits: CommitFeed): ChangeFeed {
  const listeners = new Map<string, Set<(topics: ReadonlySet<Topic>, byKey?: string) => void>>();
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
