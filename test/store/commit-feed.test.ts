import { describe, expect, it } from 'vitest';
import { commitFeedOf, observeCommits, type CommittedWrite } from '../../src/store/core/commit-signal.js';
import { MemoryStore } from '../../src/store/core/memory-store.js';
import { defineCollection } from '../../src/store/core/types.js';

/** The commits a store reports (what wakes embedded bots); test/store/pg-commit-feed.test.ts has PostgreSQL's. */

interface Note {
  id: string;
  text: string;
}
const Notes = defineCollection<Note>({ name: 'feed_notes' });

describe('commit feed', () => {
  it('reports each committed transaction with its writes (before and after) and its cause; a failed one is not reported', async () => {
    let cause = 'key_a';
    const store = observeCommits(new MemoryStore(), { cause: () => cause });
    const heard: Array<{ writes: CommittedWrite[]; cause: unknown }> = [];
    commitFeedOf(store)!.subscribe((writes, _read, c) => heard.push({ writes: [...writes], cause: c }));
    await store.transaction((tx) => tx.col(Notes).insert({ id: 'n1', text: 'one' }));
    cause = 'key_b';
    await store.transaction((tx) => tx.col(Notes).update('n1', { text: 'two' }));
    await expect(store.transaction((tx) => {
      tx.col(Notes).insert({ id: 'n2', text: 'x' });
      throw new Error('no');
    })).rejects.toThrow('no');
    await store.transaction((tx) => void tx.col(Notes).get('n1')); // nothing written: nothing heard
    expect(heard).toEqual([
      { writes: [{ collection: 'feed_notes', id: 'n1', before: null, after: { id: 'n1', text: 'one' } }], cause: 'key_a' },
      { writes: [{ collection: 'feed_notes', id: 'n1', before: { id: 'n1', text: 'one' }, after: { id: 'n1', text: 'two' } }], cause: 'key_b' },
    ]);
  });
});
