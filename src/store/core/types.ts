/** A record kept by the store: every record has a string `id`. */
export interface StoredRecord {
  readonly id: string;
}

/**
 * A typed collection: its name and the indexes kept over it.
 * `unique` indexes map one key to one record; `multi` indexes map a key to the ids of every
 * record under it, kept in ascending id order (ids are time-sortable, so that is creation order).
 *
 * @example
 * const Users = defineCollection<User>({ name: 'users', unique: { pin: (u) => u.pin_code } });
 */
export interface CollectionDef<T extends StoredRecord> {
  readonly name: string;
  readonly unique?: Readonly<Record<string, (record: T) => string | undefined>>;
  readonly multi?: Readonly<Record<string, (record: T) => string | readonly string[] | undefined>>;
  /** Internal: carries the record type. */
  readonly __type?: T;
}

/** Names of the collections declared in this process. Internal: see `declaredCollections`. */
const declared = new Set<string>();

/** Declares a collection. Domain modules declare their own; the store binds them on first use. */
export function defineCollection<T extends StoredRecord>(def: Omit<CollectionDef<T>, '__type'>): CollectionDef<T> {
  declared.add(def.name);
  return def as CollectionDef<T>;
}

/**
 * The names of every collection declared so far in this process (by the modules loaded). The
 * start-up checks accept journal changes to these besides the list they are given, so a test's
 * own collections replay too.
 */
export function declaredCollections(): ReadonlySet<string> {
  return declared;
}

/** Read access to one collection. Records are deeply frozen: change them with `put`/`update`. */
export interface ReadCollection<T extends StoredRecord> {
  get(id: string): T | undefined;
  /** The record a unique index holds under `key`. */
  one(index: string, key: string): T | undefined;
  /** Ids under `key` in a multi index, ascending (oldest first). Do not mutate. */
  ids(index: string, key: string): readonly string[];
  /** The keys present in an index (unique or multi), in no particular order. */
  keys(index: string): IterableIterator<string>;
  count(): number;
  /** Every record, in no particular order. Only for operator commands and start-up jobs. */
  all(): IterableIterator<T>;
}

/** Write access to one collection inside a transaction. */
export interface WriteCollection<T extends StoredRecord> extends ReadCollection<T> {
  /** Adds a record; throws if the id exists or a unique key is taken. */
  insert(record: T): T;
  /** Adds or replaces a record. */
  put(record: T): T;
  /** Replaces fields of an existing record; throws if it does not exist. */
  update(id: string, patch: Partial<T>): T;
  delete(id: string): boolean;
}

export interface ReadView {
  col<T extends StoredRecord>(def: CollectionDef<T>): ReadCollection<T>;
}

export interface Tx {
  col<T extends StoredRecord>(def: CollectionDef<T>): WriteCollection<T>;
}

/** How a transaction is made: what its commit is attributed to. */
export interface TransactionOptions {
  /**
   * What made the change (the API passes the id of the request's key): the commit feed gives it
   * to its listeners (store/core/commit-signal.ts), so a bot is not woken by its own replies.
   * Stores that have no commit feed ignore it.
   */
  cause?: unknown;
}

/**
 * The store: state in memory, every mutation a synchronous all-or-nothing transaction.
 * `transaction` resolves once the change set is durable (for the file store: fsync'd).
 *
 * @example
 * const user = await store.transaction((tx) => tx.col(Users).insert({ id: newId('usr'), ... }));
 */
export interface Store {
  readonly read: ReadView;
  /** Whether the store can write now (the file store cannot while its disk refuses writes). */
  health?(): StoreHealth;
  transaction<R>(fn: (tx: Tx) => R, options?: TransactionOptions): Promise<R>;
  /**
   * Resolves once every transaction committed so far is durable. The API awaits it before
   * answering a read, so no response shows state that a crash could still take back.
   */
  durable(): Promise<void>;
  /**
   * Whether `durable()` has nothing to wait for now: every transaction committed so far has
   * settled. A read answered at once is then as safe as one answered after `durable()` (the API
   * skips the wait, a promise and its turns, on most reads). A store that cannot tell without
   * asking (PostgreSQL: other processes' writes) leaves it out.
   */
  isDurable?(): boolean;
  /** Writes everything out (file store: snapshot, journal cut) and releases the directory. */
  close(): Promise<void>;
}

/** One change of a transaction: collection, id, and the new record or null for a delete. */
export type Change = [collection: string, id: string, record: StoredRecord | null];

/** Thrown when an insert collides with an existing id or unique key. */
export class ConstraintError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConstraintError';
  }
}

/** What `/healthz` reports of the store. */
export type StoreHealth =
  | { writable: true }
  | {
      writable: false;
      /** Why, e.g. `ENOSPC: no space left on device, write`. */
      reason: string;
      /** Clock ms since when writes are refused. */
      since: number;
      /** Ms until the next attempt to write again. */
      retryAfterMs: number;
    };
