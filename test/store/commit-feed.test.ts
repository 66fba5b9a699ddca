import { afterEach, describe, expect, it } from 'vitest';
import { observeCommits, type CommittedWrite } from '../../src/store/core/commit-signal.js';
import { MemoryStore } from '../../src/store/core/memory-store.js';
import { defineCollection, type Store } from '../../src/store/core/types.js';
import { FileStore } from '../../src/store/file/file-store.js';
import { openAppendFile } from '../../src/store/file/journal-file.js';
import { tempDir } from '../helpers/api.js';

/** The commits a store reports (what wakes embedded bots); test/store/pg-commit-feed.test.ts has PostgreSQL's. */

interface Note {
  id: string;
  text: string;
}
const Notes = defineCollection<Note>({ name: 'feed_notes' });

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A store that only has the Store interface: observeCommits wraps its views to note writes. */
function plain(inner: Store): Store {
  return {
    read: inner.read,
    transaction: (fn) => inner.transaction(fn),
    durable: () => inner.durable(),
    close: () => inner.close(),
  };
}

async function fileStore(failAppends?: { on: boolean }): Promise<FileStore> {
  const t = tempDir('pinbot-feed-');
  const store = await FileStore.open(t.dir, {
    openAppend: async (path) => {
      const real = await openAppendFile(path);
      return {
        ...real,
        append: (data) =>
          failAppends?.on
            ? Promise.reject(Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' }))
            : real.append(data),
      };
    },
    retry: { firstMs: 60_000, maxMs: 60_000 },
    warn: () => undefined,
  });
  cleanups.push(t.cleanup, () => store.close());
  return store;
}

// The file and memory stores note writes themselves (NotingStore); any other store is wrapped.
const stores: Array<[string, () => Promise<Store>]> = [
  ['memory store (notes its writes)', async () => new MemoryStore()],
  ['file store (notes its writes)', () => fileStore()],
  ['a store without noting (views wrapped)', async () => plain(new MemoryStore())],
];

describe.each(stores)('commit feed: %s', (_name, make) => {
  it(
    'reports each committed transaction with its writes (before and after) and its ' +
      'cause; a failed one is not reported',
    async () => {
      let cause = 'key_a';
      const { store, commits } = observeCommits(await make(), { cause: () => cause });
      const heard: Array<{ writes: CommittedWrite[]; cause: unknown }> = [];
      commits.subscribe((writes, _read, c) => heard.push({ writes: [...writes], cause: c }));
      await store.transaction((tx) => tx.col(Notes).insert({ id: 'n1', text: 'one' }));
      cause = 'key_b';
      await store.transaction((tx) => tx.col(Notes).update('n1', { text: 'two' }));
      await expect(
        store.transaction((tx) => {
          tx.col(Notes).insert({ id: 'n2', text: 'x' });
          throw new Error('no');
        }),
      ).rejects.toThrow('no');
      await store.transaction((tx) => void tx.col(Notes).get('n1')); // nothing written: nothing heard
      expect(heard).toEqual([
        {
          writes: [{ collection: 'feed_notes', id: 'n1', before: null, after: { id: 'n1', text: 'one' } }],
          cause: 'key_a',
        },
        {
          writes: [
            { collection: 'feed_notes', id: 'n1', before: { id: 'n1', text: 'one' }, after: { id: 'n1', text: 'two' } },
          ],
          cause: 'key_b',
        },
      ]);
      expect(store.read.col(Notes).get('n2')).toBeUndefined();
    },
  );

  it(
    'reports every write in order, a record written twice once per write, puts and ' +
      'deletes with what they replaced',
    async () => {
      const { store, commits } = observeCommits(await make());
      const heard: CommittedWrite[][] = [];
      commits.subscribe((writes) => heard.push([...writes]));
      await store.transaction((tx) => tx.col(Notes).insert({ id: 'n1', text: 'one' }));
      await store.transaction((tx) => {
        tx.col(Notes).put({ id: 'n1', text: 'two' });
        tx.col(Notes).update('n1', { text: 'three' });
        tx.col(Notes).put({ id: 'n2', text: 'new' });
        expect(tx.col(Notes).delete('nope')).toBe(false); // nothing to delete: no write
        tx.col(Notes).delete('n2');
      });
      expect(heard[1]).toEqual([
        { collection: 'feed_notes', id: 'n1', before: { id: 'n1', text: 'one' }, after: { id: 'n1', text: 'two' } },
        { collection: 'feed_notes', id: 'n1', before: { id: 'n1', text: 'two' }, after: { id: 'n1', text: 'three' } },
        { collection: 'feed_notes', id: 'n2', before: null, after: { id: 'n2', text: 'new' } },
        { collection: 'feed_notes', id: 'n2', before: { id: 'n2', text: 'new' }, after: null },
      ]);
      // what listeners are given is the stored state: frozen, no caller can change it
      const after = heard[1]![1]!.after as Note;
      expect(Object.isFrozen(after)).toBe(true);
      expect(() => ((after as { text: string }).text = 'changed')).toThrow(TypeError);
      expect(store.read.col(Notes).get('n1')).toBe(after);
    },
  );
});

describe('commit feed of the file store', () => {
  it('reports no transaction whose journal line the disk refused (taken back, rejected)', async () => {
    const failing = { on: false };
    const { store, commits } = observeCommits(await fileStore(failing));
    const heard: CommittedWrite[][] = [];
    commits.subscribe((writes) => heard.push([...writes]));
    await store.transaction((tx) => tx.col(Notes).insert({ id: 'n1', text: 'one' }));
    failing.on = true;
    await expect(store.transaction((tx) => tx.col(Notes).update('n1', { text: 'lost' }))).rejects.toThrow();
    expect(heard).toHaveLength(1);
    expect(store.read.col(Notes).get('n1')?.text).toBe('one');
  });

  it('a tx kept after its transaction ended cannot write (nothing changes that no journal line records)', async () => {
    const store = await fileStore();
    let kept: Parameters<Parameters<Store['transaction']>[0]>[0] | undefined;
    await store.transaction((tx) => {
      kept = tx;
      tx.col(Notes).insert({ id: 'n1', text: 'one' });
    });
    expect(() => kept!.col(Notes).insert({ id: 'n2', text: 'late' })).toThrow(/outside a transaction/);
    expect(() => kept!.col(Notes).update('n1', { text: 'late' })).toThrow(/outside a transaction/);
    expect(kept!.col(Notes).get('n1')?.text).toBe('one'); // reads still work
    expect(store.read.col(Notes).count()).toBe(1);
  });
});
