import type { CollectionDef, ReadCollection, StoredRecord, WriteCollection } from './types.js';
import { ConstraintError } from './types.js';
import { lowerBound } from '../../util/sorted.js';
import { setOwnField } from '../../util/own-field.js';

// The records of one collection and its indexes (unique and multi), kept sorted by id; the
// StoreEngine (engine.ts) runs transactions over them.

/**
 * Freezes a record and everything inside it, so no caller can change stored state except
 * through a transaction (which is what gets journaled). Internal.
 */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    // Most records are flat: one look at the members before freezing (for…in over an object
    // just frozen costs V8 about twice as much, and the store freezes every record it is given:
    // four a message write), then the members only when there are objects among them — after
    // the freeze, so a cycle ends.
    let nested = false;
    for (const k in value) {
      const v = value[k];
      if (v && typeof v === 'object') {
        nested = true;
        break;
      }
    }
    Object.freeze(value);
    if (nested) freezeMembers(value);
  }
  return value;
}

/**
 * Deep-freezes the members of `value` that are objects (deepFreeze stops at a frozen object, so
 * a frozen record's members are frozen through this). for…in rather than Object.values: no
 * array per record when 1M are loaded at start-up.
 */
export function freezeMembers<T>(value: T): T {
  for (const k in value) {
    const v = value[k];
    if (v && typeof v === 'object') deepFreeze(v);
  }
  return value;
}

/**
 * The frozen copy the store keeps of `record`, with the fields of `patch` over it and the id
 * still the record's: what `deepFreeze({ ...record, ...patch, id: record.id })` gives (own
 * enumerable fields, in order), made field by field into an empty object. Not by spread: in
 * optimised code V8 gives each object a spread makes a map (hidden class) of its own once it is
 * frozen — one per stored record, ~3× the time of this copy, old-generation garbage for the
 * collector, and every read of a record's field megamorphic. Copies made field by field share
 * their maps, and so do their frozen forms. The copy notes whether any field holds an object, so
 * a flat record (most) is frozen without another look at its fields. Internal.
 */
export function frozenCopy<T extends StoredRecord>(record: T, patch?: object): T {
  const out: Record<string, unknown> = {};
  let nested = copyFields(out, record);
  if (patch) {
    nested = copyFields(out, patch) || nested;
    out.id = record.id;
  }
  Object.freeze(out);
  if (nested) freezeMembers(out);
  return out as T;
}

/** Copies the own enumerable fields of `from` into `out`; true when one holds an object. Internal. */
function copyFields(out: Record<string, unknown>, from: object): boolean {
  let nested = false;
  for (const k in from) {
    if (!Object.hasOwn(from, k)) continue;
    const v = (from as Record<string, unknown>)[k];
    if (v && typeof v === 'object') nested = true;
    setOwnField(out, k, v);
  }
  return nested;
}

export { lowerBound };

type KeyFn = (record: StoredRecord) => string | readonly string[] | undefined;

/** One index of a collection: its key function and its map. Internal. */
interface UniqueIndex {
  readonly name: string;
  readonly key: (record: StoredRecord) => string | undefined;
  readonly map: Map<string, string>;
}
interface MultiIndex {
  readonly name: string;
  readonly key: KeyFn;
  readonly lists: IdLists;
}

/** Whether two index keys (a key or a list of keys) are the same. Internal. */
function sameKeys(a: string | readonly string[] | undefined, b: string | readonly string[] | undefined): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The id lists of one multi index, each ascending when read. An id that does not sort after
 * its list's last (ids that are hashes, as the idempotency records' `day` index holds) is
 * appended and the list marked: it is put in order when next read or removed from, so a write
 * costs O(1) instead of a splice into a list of every record under the key. Internal.
 */
class IdLists {
  readonly map = new Map<string, string[]>();
  /** The keys whose lists have ids appended out of order since they were last put in order. */
  private readonly unsorted = new Set<string>();

  /** The ids under `key`, ascending (an empty list when none). */
  get(key: string): readonly string[] {
    if (this.unsorted.size > 0 && this.unsorted.has(key)) return this.order(key);
    return this.map.get(key) ?? [];
  }

  /** Adds `id` under `key` (once, however often it is added). */
  add(key: string, id: string): void {
    const arr = this.map.get(key);
    if (!arr) this.map.set(key, [id]);
    else if (arr[arr.length - 1]! < id) arr.push(id);
    else if (arr[arr.length - 1] !== id) {
      arr.push(id);
      this.unsorted.add(key);
    }
  }

  remove(key: string, id: string): void {
    const arr = this.unsorted.has(key) ? this.order(key) : this.map.get(key);
    if (!arr) return;
    const at = lowerBound(arr, id);
    if (arr[at] === id) {
      if (at === arr.length - 1) arr.pop();
      else arr.splice(at, 1);
    }
    if (arr.length === 0) this.map.delete(key);
  }

  /**
   * Sorts the list of `key` in place (the ascending prefix is one run to TimSort: O(n + k log
   * k) for k ids appended out of order) and drops repeats. Internal.
   */
  private order(key: string): string[] {
    this.unsorted.delete(key);
    const arr = this.map.get(key)!;
    arr.sort();
    let w = 1;
    for (let r = 1; r < arr.length; r++) if (arr[r] !== arr[w - 1]) arr[w++] = arr[r]!;
    arr.length = w;
    return arr;
  }
}

/**
 * The records and indexes of one collection. Internal.
 * Index work is kept free of per-record allocations: at start-up `bind` indexes every loaded
 * record (1M messages in bench/startup), and an update whose keys did not change leaves the
 * indexes alone (no O(n) splice out and back into a long id list).
 */
export class CollectionState {
  readonly records = new Map<string, StoredRecord>();
  /**
   * The read view handed out by `StoreEngine.col`, made once: request paths call `db.col(X)` several
   * times per request, and a fresh object of closures each time showed up in the read bench's
   * profile (allocation + GC).
   */
  view: ReadCollection<StoredRecord> | undefined;
  /** The write view transactions are given (engine.ts), made once for the same reason. */
  writer: WriteCollection<StoredRecord> | undefined;
  private def: CollectionDef<StoredRecord> | undefined;
  private readonly uniques = new Map<string, Map<string, string>>();
  private readonly multis = new Map<string, IdLists>();
  private uniqueList: UniqueIndex[] = [];
  private multiList: MultiIndex[] = [];

  constructor(readonly name: string) {}

  /** Attaches the indexes of `def`, building them over records loaded before. */
  bind(def: CollectionDef<StoredRecord>): void {
    if (this.def) return;
    this.def = def;
    this.uniqueList = Object.entries(def.unique ?? {}).map(([name, key]) => ({
      name,
      key,
      map: new Map<string, string>(),
    }));
    this.multiList = Object.entries(def.multi ?? {}).map(([name, key]) => ({
      name,
      key,
      lists: new IdLists(),
    }));
    for (const u of this.uniqueList) this.uniques.set(u.name, u.map);
    for (const m of this.multiList) this.multis.set(m.name, m.lists);
    if (this.uniqueList.length + this.multiList.length === 0) return;
    // Indexing in id order makes every multi-index insertion an append. Records loaded from a
    // snapshot usually come in id order already (they were inserted in it): then no sort.
    let ordered = true;
    let prev = '';
    for (const id of this.records.keys()) {
      if (id < prev) {
        ordered = false;
        break;
      }
      prev = id;
    }
    if (ordered) for (const record of this.records.values()) this.index(record);
    else for (const id of [...this.records.keys()].sort()) this.index(this.records.get(id)!);
  }

  get bound(): boolean {
    return this.def !== undefined;
  }

  one(index: string, key: string): StoredRecord | undefined {
    const map = this.uniques.get(index);
    if (!map) throw new Error(`collection ${this.name} has no unique index ${index}`);
    const id = map.get(key);
    return id === undefined ? undefined : this.records.get(id);
  }

  ids(index: string, key: string): readonly string[] {
    const lists = this.multis.get(index);
    if (!lists) throw new Error(`collection ${this.name} has no index ${index}`);
    return lists.get(key);
  }

  keys(index: string): IterableIterator<string> {
    const map = this.multis.get(index)?.map ?? this.uniques.get(index);
    if (!map) throw new Error(`collection ${this.name} has no index ${index}`);
    return map.keys();
  }

  /** Throws if `record` would take a unique key held by another record. */
  checkUnique(record: StoredRecord): void {
    for (const u of this.uniqueList) {
      const key = u.key(record);
      if (key === undefined) continue;
      const holder = u.map.get(key);
      if (holder !== undefined && holder !== record.id) {
        throw new ConstraintError(`${this.name}: ${u.name} ${JSON.stringify(key)} is taken`);
      }
    }
  }

  /** Replaces the record under `id` (or removes it when `next` is null), keeping indexes. */
  set(id: string, next: StoredRecord | null): void {
    this.replace(id, next, this.records.get(id));
  }

  /**
   * `set`, for a caller that has looked up `prev` — the record under `id` now, undefined for none
   * (a write: one lookup less in a large map).
   */
  replace(id: string, next: StoredRecord | null, prev: StoredRecord | undefined): void {
    if (next) this.records.set(id, next);
    else this.records.delete(id);
    if (!this.def) return;
    for (const u of this.uniqueList) {
      const before = prev && u.key(prev);
      const after = next ? u.key(next) : undefined;
      if (before === after) continue;
      if (before !== undefined && u.map.get(before) === id) u.map.delete(before);
      if (after !== undefined) u.map.set(after, id);
    }
    for (const m of this.multiList) {
      const before = prev && m.key(prev);
      const after = next ? m.key(next) : undefined;
      if (sameKeys(before, after)) continue;
      if (typeof before === 'string') m.lists.remove(before, id);
      else if (before) for (const k of before) m.lists.remove(k, id);
      if (typeof after === 'string') m.lists.add(after, id);
      else if (after) for (const k of after) m.lists.add(k, id);
    }
  }

  /**
   * The index keys of `record` under this collection's declared indexes, as `index=<JSON key>`
   * (the PostgreSQL store keeps them in a column for inspection); empty when not bound.
   */
  keysOf(record: StoredRecord): string[] {
    const out: string[] = [];
    for (const u of this.uniqueList) {
      const key = u.key(record);
      if (key !== undefined) out.push(`${u.name}=${JSON.stringify(key)}`);
    }
    for (const m of this.multiList) {
      const key = m.key(record);
      if (typeof key === 'string') out.push(`${m.name}=${JSON.stringify(key)}`);
      else if (key) for (const k of key) out.push(`${m.name}=${JSON.stringify(k)}`);
    }
    return out;
  }

  /** Adds a record that is not indexed yet (bind). */
  private index(record: StoredRecord): void {
    for (const u of this.uniqueList) {
      const key = u.key(record);
      if (key !== undefined) u.map.set(key, record.id);
    }
    for (const m of this.multiList) {
      const key = m.key(record);
      if (typeof key === 'string') m.lists.add(key, record.id);
      else if (key) for (const k of key) m.lists.add(k, record.id);
    }
  }

  /** Adds records loaded from a snapshot, before any index exists. */
  loadRecords(records: readonly StoredRecord[]): void {
    if (this.def) {
      for (const r of records) this.set(r.id, deepFreeze(r));
      return;
    }
    for (const r of records) this.records.set(r.id, deepFreeze(r));
  }
}
