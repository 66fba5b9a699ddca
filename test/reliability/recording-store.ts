import type {
  CollectionDef,
  ReadView,
  Store,
  StoreHealth,
  StoredRecord,
  Tx,
  WriteCollection,
} from '../../src/store/core/types.js';

/** One committed write seen by a RecordingStore. */
export interface RecordedWrite {
  collection: string;
  id: string;
  op: 'insert' | 'put' | 'update' | 'delete';
}

/**
 * Wraps a store and records every write of every committed transaction, so the harness can ask
 * "did this rejected request change anything?" without knowing the domain's collections.
 *
 * @example
 * const store = new RecordingStore(await FileStore.open(dir));
 * const mark = store.writes.length; await request(); store.writes.slice(mark);
 */
export class RecordingStore implements Store {
  readonly writes: RecordedWrite[] = [];

  constructor(readonly inner: Store) {}

  get read(): ReadView {
    return this.inner.read;
  }

  async transaction<R>(fn: (tx: Tx) => R): Promise<R> {
    const pending: RecordedWrite[] = [];
    // A store may run a function more than once (PgStore, after another process committed
    // first): only the last run's writes count.
    const result = await this.inner.transaction((tx) => {
      pending.length = 0;
      return fn(wrapTx(tx, pending));
    });
    this.writes.push(...pending);
    return result;
  }

  durable(): Promise<void> {
    return this.inner.durable();
  }

  health(): StoreHealth {
    return this.inner.health?.() ?? { writable: true };
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** A Tx whose collections note their writes in `out`. Internal. */
function wrapTx(tx: Tx, out: RecordedWrite[]): Tx {
  return {
    col<T extends StoredRecord>(def: CollectionDef<T>): WriteCollection<T> {
      const c = tx.col(def);
      const note = (op: RecordedWrite['op'], id: string) => out.push({ collection: def.name, id, op });
      return {
        get: (id) => c.get(id),
        one: (index, key) => c.one(index, key),
        ids: (index, key) => c.ids(index, key),
        keys: (index) => c.keys(index),
        count: () => c.count(),
        all: () => c.all(),
        insert: (r) => (note('insert', r.id), c.insert(r)),
        put: (r) => (note('put', r.id), c.put(r)),
        update: (id, patch) => (note('update', id), c.update(id, patch)),
        delete: (id) => {
          const gone = c.delete(id);
          if (gone) note('delete', id);
          return gone;
        },
      };
    },
  };
}
