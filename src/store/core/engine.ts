import type { Change, CollectionDef, ReadCollection, ReadView, StoredRecord, Tx, WriteCollection } from './types.js';
import { ConstraintError } from './types.js';
import { CollectionState, deepFreeze, freezeMembers, frozenCopy } from './collection-state.js';
import type { CommittedWrite } from './commit-signal.js';

export { lowerBound } from './collection-state.js';

/** What `StoreEngine.revert` needs to take a transaction back (opaque outside the engine). */
export type UndoLog = { readonly __undo: true };

/**
 * The change set and undo log of one transaction. Internal.
 */
class TxLog {
  readonly changes: Change[] = [];
  /**
   * Flat: collection, id, record before, record after, for each write (no array per write). It
   * also says what a commit feed reports (`committedWrites`), made only once the transaction is
   * durable: the writes' notes are no longer objects held across the fsync wait.
   */
  readonly undo: Array<CollectionState | string | StoredRecord | null> = [];

  /** `prev`: the record under `id` before the write (the caller has looked it up). */
  write(s: CollectionState, id: string, next: StoredRecord | null, prev: StoredRecord | undefined): void {
    this.undo.push(s, id, prev ?? null, next);
    s.replace(id, next, prev);
    this.changes.push([s.name, id, next]);
  }
}

/** Takes back the writes of a flat undo log, newest first. Internal. */
function undoAll(undo: TxLog['undo']): void {
  for (let i = undo.length - 4; i >= 0; i -= 4)
    (undo[i] as CollectionState).set(undo[i + 1] as string, undo[i + 2] as StoredRecord | null);
}

/**
 * The writes of a transaction, each with the record it replaced and the one it left, in the
 * order they were made (what a commit feed's listeners hear). From its undo log
 * (`StoreEngine.run`), any time after it ran.
 */
export function committedWrites(log: UndoLog): CommittedWrite[] {
  const undo = log as unknown as TxLog['undo'];
  const out: CommittedWrite[] = [];
  for (let i = 0; i < undo.length; i += 4) {
    const collection = (undo[i] as CollectionState).name;
    const id = undo[i + 1] as string;
    const before = undo[i + 2] as StoredRecord | null;
    out.push({ collection, id, before, after: undo[i + 3] as StoredRecord | null });
  }
  return out;
}

/** The log of the transaction running on an engine, if one runs. Internal. */
class Running {
  log: TxLog | undefined;
}

/** Read access to one collection; one per collection, shared by every reader. Internal. */
class CollectionReader implements ReadCollection<StoredRecord> {
  constructor(protected readonly s: CollectionState) {}
  get(id: string): StoredRecord | undefined {
    return this.s.records.get(id);
  }
  one(index: string, key: string): StoredRecord | undefined {
    return this.s.one(index, key);
  }
  ids(index: string, key: string): readonly string[] {
    return this.s.ids(index, key);
  }
  keys(index: string): IterableIterator<string> {
    return this.s.keys(index);
  }
  count(): number {
    return this.s.records.size;
  }
  all(): IterableIterator<StoredRecord> {
    return this.s.records.values();
  }
}

/**
 * Write access to one collection, for the transaction running on its engine: one per
 * collection, made on first use and shared by every transaction (they run one at a time), so a
 * transaction allocates no views. A write through it while no transaction runs (a `tx` kept
 * after its transaction ended) throws rather than change state no journal line records.
 * Internal.
 */
class WriteView extends CollectionReader implements WriteCollection<StoredRecord> {
  constructor(
    s: CollectionState,
    private readonly running: Running,
  ) {
    super(s);
  }
  private log(): TxLog {
    const log = this.running.log;
    if (!log) throw new Error(`${this.s.name}: a write outside a transaction (a tx used after its transaction ended)`);
    return log;
  }
  insert(record: StoredRecord): StoredRecord {
    const s = this.s;
    const log = this.log();
    if (s.records.has(record.id)) throw new ConstraintError(`${s.name}: id ${record.id} exists`);
    s.checkUnique(record);
    const frozen = frozenCopy(record);
    log.write(s, record.id, frozen, undefined);
    return frozen;
  }
  put(record: StoredRecord): StoredRecord {
    const log = this.log();
    this.s.checkUnique(record);
    // a frozen record is kept as it is; its members are frozen like any record's
    const frozen = Object.isFrozen(record) ? freezeMembers(record) : frozenCopy(record);
    log.write(this.s, record.id, frozen, this.s.records.get(record.id));
    return frozen;
  }
  update(id: string, patch: Partial<StoredRecord>): StoredRecord {
    const s = this.s;
    const log = this.log();
    const prev = s.records.get(id);
    if (!prev) throw new ConstraintError(`${s.name}: no record ${id}`);
    // `{ ...prev, ...patch, id }` (frozenCopy: the id stays the record's)
    const next = frozenCopy(prev, patch);
    s.checkUnique(next);
    log.write(s, id, next, prev);
    return next;
  }
  delete(id: string): boolean {
    const log = this.log();
    const prev = this.s.records.get(id);
    if (!prev) return false;
    log.write(this.s, id, null, prev);
    return true;
  }
}

/**
 * The in-memory state shared by the memory and file stores: collections, indexes and
 * synchronous transactions with an undo log. Internal to `store/`.
 */
export class StoreEngine implements ReadView {
  private readonly states = new Map<string, CollectionState>();
  /** Sequence number of the last committed transaction. */
  seq = 0;
  private readonly running = new Running();
  /** The `tx` every transaction is given (its views write into the running transaction's log). */
  private readonly tx: Tx = {
    col: <T extends StoredRecord>(def: CollectionDef<T>): WriteCollection<T> => {
      const s = this.bound(def);
      return (s.writer ??= new WriteView(s, this.running)) as unknown as WriteCollection<T>;
    },
  };

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
    const s = this.bound(def);
    return (s.view ??= new CollectionReader(s)) as unknown as ReadCollection<T>;
  }

  /**
   * Runs `fn` as one transaction. On a throw every change is undone and the error rethrown;
   * otherwise returns the result, the change set (empty when nothing changed) and the undo log
   * (`revert`; `committedWrites` gives its writes with the record before each).
   */
  run<R>(fn: (tx: Tx) => R): { result: R; changes: Change[]; undo: UndoLog } {
    if (this.running.log) throw new Error('transactions do not nest: use the tx you were given');
    const log = new TxLog();
    this.running.log = log;
    const { changes, undo } = log;
    try {
      const result = fn(this.tx);
      if (result instanceof Promise) {
        throw new Error('a store transaction must be synchronous: do async work before or after it');
      }
      if (changes.length > 0) this.seq++;
      return { result, changes, undo: undo as unknown as UndoLog };
    } catch (err) {
      undoAll(undo);
      throw err;
    } finally {
      this.running.log = undefined;
    }
  }

  /**
   * Takes back a committed transaction that never became durable (its journal write failed).
   * Transactions are taken back newest first; the caller resets `seq`.
   */
  revert(undo: UndoLog): void {
    undoAll(undo as unknown as TxLog['undo']);
  }

  /** Applies a change set read back from the journal. */
  apply(changes: readonly Change[]): void {
    for (const [name, id, record] of changes) this.applyOne(name, id, record);
  }

  /** Applies one change read back from the journal; returns the record it replaced. */
  applyOne(name: string, id: string, record: StoredRecord | null): StoredRecord | undefined {
    const s = this.state(name);
    const prev = s.records.get(id);
    s.set(id, record ? deepFreeze(record) : null);
    return prev;
  }

  /** The declared index keys of `record` in collection `name` (see CollectionState.keysOf). */
  keysOf(name: string, record: StoredRecord): string[] {
    return this.states.get(name)?.keysOf(record) ?? [];
  }

  /** The record under `id` in collection `name`, bound or not (start-up checks). */
  peek(name: string, id: string): StoredRecord | undefined {
    return this.states.get(name)?.records.get(id);
  }

  /** The records of collection `name`, bound or not (start-up checks; binding builds indexes). */
  rawRecords(name: string): Iterable<StoredRecord> {
    return this.states.get(name)?.records.values() ?? [];
  }

  /** Names of the collections holding state. */
  names(): IterableIterator<string> {
    return this.states.keys();
  }

  /** Loads the records of a snapshot. */
  load(collections: Record<string, StoredRecord[]>): void {
    for (const [name, records] of Object.entries(collections)) {
      this.state(name).loadRecords(records);
    }
  }

  /** A point-in-time copy of every collection (records are immutable, so arrays suffice). */
  dump(): Record<string, StoredRecord[]> {
    const out: Record<string, StoredRecord[]> = {};
    for (const [name, s] of this.states) out[name] = [...s.records.values()];
    return out;
  }

  /**
   * The greatest id of each collection among those shaped like `newId`'s (a 21-character body
   * after the prefix; other ids, e.g. `idem_<sha-256>`, carry no time), in plain string order.
   */
  *maxIds(): IterableIterator<string> {
    for (const s of this.states.values()) {
      let max: string | undefined;
      for (const id of s.records.keys()) {
        if (id.length - id.indexOf('_') !== 22) continue;
        if (max === undefined || id > max) max = id;
      }
      if (max !== undefined) yield max;
    }
  }

  /** Every record id of every collection, for callers that must observe ids after a load. */
  *allIds(): IterableIterator<string> {
    for (const s of this.states.values()) yield* s.records.keys();
  }
}
