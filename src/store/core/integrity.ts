import type { StoredRecord } from './types.js';

/**
 * Checks the code above the store supplies so that start-up refuses damaged data. The store
 * knows no domain: the domain says which collections exist, what a valid record of some of them
 * looks like, which quantity every transaction keeps unchanged (money) and what must hold over
 * the whole state.
 *
 * @example
 * FileStore.open(dir, { integrity: { collections: ['users'], verify: (db) => undefined } });
 */
export interface StoreIntegrity {
  /** Every collection the code writes: a journal change to any other is damage. */
  collections?: Iterable<string>;
  /** Per collection: what is wrong with a record (undefined when it is valid). */
  records?: Readonly<Record<string, (record: StoredRecord) => string | undefined>>;
  /**
   * A quantity every transaction keeps unchanged: `delta` is what writing `after` over `before`
   * changes it by, for a record of one of `collections`. A journal line whose deltas do not
   * add up to 0 is damage (an edited balance).
   */
  conserved?: {
    what: string;
    collections: readonly string[];
    delta(collection: string, before: StoredRecord | undefined, after: StoredRecord | null): number;
  };
  /**
   * An invariant over the whole state, checked on the snapshot (journal lines are checked one by
   * one through `conserved`): the problem, or undefined. `records` iterates a collection.
   */
  verify?(records: (collection: string) => Iterable<StoredRecord>): string | undefined;
}

/** A collection name as the store writes them. Internal. */
const NAME = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * Checks one change `[collection, id, record|null]` of a journal line: its shape, a known
 * collection, a record whose `id` is the change's, and the collection's own record check.
 * Returns the problem, or undefined. Internal to the store.
 */
export function changeProblem(
  change: unknown,
  known: ReadonlySet<string> | undefined,
  records: StoreIntegrity['records'],
): string | undefined {
  if (!Array.isArray(change) || change.length !== 3) return 'a change is not [collection, id, record]';
  const [name, id, record] = change as [unknown, unknown, unknown];
  if (typeof name !== 'string') return `collection name ${JSON.stringify(name)} is not one the store writes`;
  if (known) {
    if (!known.has(name)) return `unknown collection ${JSON.stringify(name)}`;
  } else if (!NAME.test(name)) return `collection name ${JSON.stringify(name)} is not one the store writes`;
  if (typeof id !== 'string' || id === '' || id.length > 300)
    return `${name}: the id is not a string of 1 to 300 characters`;
  if (record === null) return undefined;
  if (typeof record !== 'object' || Array.isArray(record)) return `${name} ${id}: the record is not an object`;
  if ((record as StoredRecord).id !== id)
    return `${name} ${id}: the record's id is ${JSON.stringify((record as StoredRecord).id)}`;
  const check = records && Object.hasOwn(records, name) ? records[name] : undefined;
  const why = check?.(record as StoredRecord);
  return why === undefined ? undefined : `${name} ${id}: ${why}`;
}
