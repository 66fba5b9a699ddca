import type { Change, CollectionDef, ReadCollection, ReadView, StoredRecord, Tx, WriteCollection } from './types.js';
import { ConstraintError } from './types.js';

/**
 * Freezes a record and everything inside it, so no caller can change stored state except
 * through a transaction (which is what gets journaled). Internal.
 */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Finds the insertion point of `id` in an ascending array. Internal. */
export function lowerBound(arr: readonly string[], id: string): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (arr[mid]! < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function keysOf(value: string | readonly string[] | undefined): readonly string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : value;
}

/** The records and indexes of one collection. Internal. */
class CollectionState {
  readonly records = new Map<string, StoredRecord>();
  private def: CollectionDef<StoredRecord> | undefined;
  private readonly uniques = new Map<string, Map<string, string>>();
  private readonly multis = new Map<string, Map<string, string[]>>();

  constructor(readonly name: string) {}

  /** Attaches the indexes of `def`, building them over records loaded before. */
  bind(def: CollectionDef<StoredRecord>): void {
    if (this.def) return;
    this.def = def;
    for (const name of Object.keys(def.unique ?? {})) this.uniques.set(name, new Map());
    for (const name of Object.keys(def.multi ?? {})) this.multis.set(name, new Map());
    const sorted = [...this.records.keys()].sort();
    for (const id of sorted) this.index(this.records.get(id)!);
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
    const map = this.multis.get(index);
    if (!map) throw new Error(`collection ${this.name} has no index ${index}`);
    return map.get(key) ?? [];
  }

  keys(index: string): IterableIterator<string> {
    const map = this.multis.get(index) ?? this.uniques.get(index);
    if (!map) throw new Error(`collection ${this.name} has no index ${index}`);
    return map.keys();
  }

  /** Throws if `record` would take a unique key held by another record. */
  checkUnique(record: StoredRecord): void {
    for (const [name, fn] of Object.entries(this.def?.unique ?? {})) {
      const key = fn(record);
      if (key === undefined) continue;
      const holder = this.uniques.get(name)!.get(key);
      if (holder !== undefined && holder !== record.id) {
        throw new ConstraintError(`${this.name}: ${name} ${JSON.stringify(key)} is taken`);
      }
    }
  }

  /** Replaces the record under `id` (or removes it when `next` is null), keeping indexes. */
  set(id: string, next: StoredRecord | null): void {
    const prev = this.records.get(id);
    if (prev) this.unindex(prev);
    if (next) {
      this.records.set(id, next);
      this.index(next);
    } else {
      this.records.delete(id);
    }
  }

  private index(record: StoredRecord): void {
    if (!this.def) return;
    for (const [name, fn] of Object.entries(this.def.unique ?? {})) {
      const key = fn(record);
      if (key !== undefined) this.uniques.get(name)!.set(key, record.id);
    }
    for (const [name, fn] of Object.entries(this.def.multi ?? {})) {
      const map = this.multis.get(name)!;
      for (const key of keysOf(fn(record))) {
        let arr = map.get(key);
        if (!arr) map.set(key, (arr = []));
        if (arr.length === 0 || arr[arr.length - 1]! < record.id) arr.push(record.id);
        else {
          const at = lowerBound(arr, record.id);
          if (arr[at] !== record.id) arr.splice(at, 0, record.id);
        }
      }
    }
  }

  private unindex(record: StoredRecord): void {
    if (!this.def) return;
    for (const [name, fn] of Object.entries(this.def.unique ?? {})) {
      const key = fn(record);
      const map = this.uniques.get(name)!;
      if (key !== undefined && map.get(key) === record.id) map.delete(key);
    }
    for (const [name, fn] of Object.entries(this.def.multi ?? {})) {
      const map = this.multis.get(name)!;
      for (const key of keysOf(fn(record))) {
        const arr = map.get(key);
        if (!arr) continue;
        const at = lowerBound(arr, record.id);
        if (arr[at] === record.id) arr.splice(at, 1);
        if (arr.length === 0) map.delete(key);
      }
    }
  }
}

/**
 * The in-memory state shared by the memory and file stores: collections, indexes and
 * synchronous transactions with an undo log. Internal to `store/`.
 */
export class Engine implements ReadView {
  private readonly states = new Map<string, CollectionState>();
  /** Sequence number of the last committed transaction. */
  seq = 0;
  private active: Change[] | undefined;

  private state(name: string): CollectionState {
    let s = this.states.get(name);
    if (!s) this.states.set(name, (s = new CollectionState(name)));
    return s;
  }

  private bound<T extends StoredRecord>(def: CollectionDef<T>): CollectionState {
    const s = this.state(def.name);
    if (!s.bound) s.bind(def as unknown as CollectionDef<StoredRecord>);
    return s;
  }

  col<T extends StoredRecord>(def: CollectionDef<T>): ReadCollection<T> {
    return this.reader(this.bound(def)) as ReadCollection<T>;
  }

  private reader(s: CollectionState): ReadCollection<StoredRecord> {
    return {
      get: (id) => s.records.get(id),
      one: (index, key) => s.one(index, key),
      ids: (index, key) => s.ids(index, key),
      keys: (index) => s.keys(index),
      count: () => s.records.size,
      all: () => s.records.values(),
    };
  }

  /**
   * Runs `fn` as one transaction. On a throw every change is undone and the error rethrown;
   * otherwise returns the result and the change set (empty when nothing changed).
   */
  run<R>(fn: (tx: Tx) => R): { result: R; changes: Change[] } {
    if (this.active) throw new Error('transactions do not nest: use the tx you were given');
    const changes: Change[] = [];
    const undo: Array<[CollectionState, string, StoredRecord | null]> = [];
    this.active = changes;
    const write = (s: CollectionState, id: string, next: StoredRecord | null) => {
      undo.push([s, id, s.records.get(id) ?? null]);
      s.set(id, next);
      changes.push([s.name, id, next]);
    };
    const tx: Tx = {
      col: <T extends StoredRecord>(def: CollectionDef<T>): WriteCollection<T> => {
        const s = this.bound(def);
        const base = this.reader(s);
        const coll: WriteCollection<StoredRecord> = {
          ...base,
          insert: (record) => {
            if (s.records.has(record.id)) throw new ConstraintError(`${s.name}: id ${record.id} exists`);
            s.checkUnique(record);
            const frozen = deepFreeze({ ...record });
            write(s, record.id, frozen);
            return frozen;
          },
          put: (record) => {
            s.checkUnique(record);
            const frozen = deepFreeze({ ...record });
            write(s, record.id, frozen);
            return frozen;
          },
          update: (id, patch) => {
            const prev = s.records.get(id);
            if (!prev) throw new ConstraintError(`${s.name}: no record ${id}`);
            const next = deepFreeze({ ...prev, ...patch, id });
            s.checkUnique(next);
            write(s, id, next);
            return next;
          },
          delete: (id) => {
            if (!s.records.has(id)) return false;
            write(s, id, null);
            return true;
          },
        };
        return coll as unknown as WriteCollection<T>;
      },
    };
    try {
      const result = fn(tx);
      if (result instanceof Promise) {
        throw new Error('a store transaction must be synchronous: do async work before or after it');
      }
      if (changes.length > 0) this.seq++;
      return { result, changes };
    } catch (err) {
      for (let i = undo.length - 1; i >= 0; i--) {
        const [s, id, prev] = undo[i]!;
        s.set(id, prev);
      }
      throw err;
    } finally {
      this.active = undefined;
    }
  }

  /** Applies a change set read back from the journal. */
  apply(changes: readonly Change[]): void {
    for (const [name, id, record] of changes) {
      this.state(name).set(id, record ? deepFreeze(record) : null);
    }
  }

  /** Loads the records of a snapshot. */
  load(collections: Record<string, StoredRecord[]>): void {
    for (const [name, records] of Object.entries(collections)) {
      const s = this.state(name);
      for (const r of records) s.set(r.id, deepFreeze(r));
    }
  }

  /** A point-in-time copy of every collection (records are immutable, so arrays suffice). */
  dump(): Record<string, StoredRecord[]> {
    const out: Record<string, StoredRecord[]> = {};
    for (const [name, s] of this.states) out[name] = [...s.records.values()];
    return out;
  }

  /** Every record id of every collection, for callers that must observe ids after a load. */
  *allIds(): IterableIterator<string> {
    for (const s of this.states.values()) yield* s.records.keys();
  }
}
