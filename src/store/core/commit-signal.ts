import type {
  Change,
  CollectionDef,
  ReadView,
  Store,
  StoredRecord,
  TransactionOptions,
  Tx,
  WriteCollection,
} from './types.js';

/**
 * One write of a committed transaction: the record before and after (null when absent; `before`
 * is also null for a commit of another process, which reports only what it wrote).
 */
export interface CommittedWrite {
  collection: string;
  id: string;
  before: StoredRecord | null;
  after: StoredRecord | null;
}

/**
 * `cause` is the transaction's `cause` option (the API passes the id of the request's key), else
 * what the feed's `cause()` said when the transaction began.
 */
export type CommitListener = (writes: readonly CommittedWrite[], read: ReadView, cause: unknown) => void;

/** Lets callers hear of every committed transaction of a store. */
export interface CommitFeed {
  /** Calls `listener` after each transaction that changed something (in commit order). Returns the unsubscribe. */
  subscribe(listener: CommitListener): () => void;
}

/**
 * A store that notes the writes of its transactions itself (the file and memory stores, whose
 * engine runs each transaction function once): `observeCommits` then needs no wrapper around
 * every collection view of every transaction, which cost a Map, a view object per collection
 * and closures per write request (bench/tools/write-core.ts).
 */
export interface NotingStore extends Store {
  /**
   * `transaction`, noting each write with the record it replaced. Once the transaction has
   * committed (is durable), `onCommit` is given its writes, when there are any, before the
   * returned promise resolves; a transaction that fails is given to no one.
   */
  transactionNoted<R>(fn: (tx: Tx) => R, onCommit: (writes: readonly CommittedWrite[]) => void): Promise<R>;
}

const notesItself = (store: Store): store is NotingStore =>
  typeof (store as Partial<NotingStore>).transactionNoted === 'function';

/** A store whose committed transactions are heard of, and the feed that tells of them. */
export interface ObservedStore {
  /** The store to write through: its commits are told to `commits`' listeners. */
  store: Store;
  commits: CommitFeed;
}

/** A write view that notes each write in `log` (a class: no closures per transaction). Internal. */
class NotingView<T extends StoredRecord> implements WriteCollection<T> {
  constructor(
    private readonly inner: WriteCollection<T>,
    private readonly name: string,
    private readonly log: CommittedWrite[],
  ) {}
  get(id: string) {
    return this.inner.get(id);
  }
  one(index: string, key: string) {
    return this.inner.one(index, key);
  }
  ids(index: string, key: string) {
    return this.inner.ids(index, key);
  }
  keys(index: string) {
    return this.inner.keys(index);
  }
  count() {
    return this.inner.count();
  }
  all() {
    return this.inner.all();
  }
  insert(record: T): T {
    const out = this.inner.insert(record);
    this.log.push({ collection: this.name, id: out.id, before: null, after: out });
    return out;
  }
  put(record: T): T {
    const before = this.inner.get(record.id) ?? null;
    const out = this.inner.put(record);
    this.log.push({ collection: this.name, id: out.id, before, after: out });
    return out;
  }
  update(id: string, patch: Partial<T>): T {
    const before = this.inner.get(id) ?? null;
    const out = this.inner.update(id, patch);
    this.log.push({ collection: this.name, id, before, after: out });
    return out;
  }
  delete(id: string): boolean {
    const before = this.inner.get(id) ?? null;
    const gone = this.inner.delete(id);
    if (gone) this.log.push({ collection: this.name, id, before, after: null });
    return gone;
  }
}

/**
 * Wraps a store so listeners hear of every committed transaction, with what it wrote (the
 * embedded server wakes the bots a change concerns; a virtual clock learns the world changed).
 * Writes are noted as they are made; a transaction that throws is undone and heard of by no one.
 * Reads go straight through. A commit's cause is its transaction's `cause` option, or what
 * `cause()` says when it begins.
 *
 * @example const { store, commits } = observeCommits(fileStore); commits.subscribe((writes) => …);
 */
export function observeCommits(store: Store, { cause }: { cause?: () => unknown } = {}): ObservedStore {
  const listeners = new Set<CommitListener>();
  const tell = (log: readonly CommittedWrite[], why: unknown) => {
    if (log.length) for (const l of listeners) l(log, store.read, why);
  };
  const wrapped: Store = {
    get read() {
      return store.read;
    },
    transaction: notesItself(store)
      ? (fn, options?: TransactionOptions) => {
          const why = options?.cause ?? cause?.();
          return store.transactionNoted(fn, (writes) => tell(writes, why));
        }
      : async (fn, options?: TransactionOptions) => {
          const log: CommittedWrite[] = [];
          const why = options?.cause ?? cause?.();
          const out = await store.transaction((tx) => {
            // a store that runs the function again (PostgreSQL, after another process committed
            // first) notes only the run that committed
            log.length = 0;
            const views = new Map<string, WriteCollection<StoredRecord>>();
            const noted: Tx = {
              col: <T extends StoredRecord>(def: CollectionDef<T>) => {
                let v = views.get(def.name);
                if (!v)
                  views.set(
                    def.name,
                    (v = new NotingView(tx.col(def) as unknown as WriteCollection<StoredRecord>, def.name, log)),
                  );
                return v as unknown as WriteCollection<T>;
              },
            };
            return fn(noted);
          });
          tell(log, why);
          return out;
        },
    durable: () => store.durable(),
    ...(store.isDurable ? { isDurable: () => store.isDurable!() } : {}),
    health: () => store.health?.() ?? { writable: true },
    close: () => store.close(),
  };
  // a store shared with other processes (PostgreSQL) reports their commits once applied here
  const shared = store as Store & { onRemoteCommit?: (l: (changes: readonly Change[]) => void) => () => void };
  shared.onRemoteCommit?.((changes) => {
    const writes = changes.map(
      ([collection, id, record]): CommittedWrite => ({ collection, id, before: null, after: record }),
    );
    if (writes.length) for (const l of listeners) l(writes, store.read, undefined);
  });
  const commits: CommitFeed = {
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
  return { store: wrapped, commits };
}
