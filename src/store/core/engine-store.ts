import { StoreEngine } from './engine.js';
import type { ReadView, Store, StoreHealth, StoredRecord, Tx } from './types.js';
import type { WriteGate } from './write-gate.js';

/**
 * The facade both durable stores share, written once: reads go to the in-memory StoreEngine,
 * a transaction is refused at once when the store is closed or its write gate is down, and the
 * last commit is remembered for `durable()`. A driver supplies `commit` (how a transaction
 * becomes durable), `durable` and `close`.
 */
export abstract class EngineStore implements Store {
  protected readonly engine = new StoreEngine();
  /** Whether writes are taken now (down after the disk or the database refused one). */
  protected abstract readonly gate: WriteGate;
  protected closed = false;
  /** Settles when the last transaction committed so far has (either way). */
  protected lastCommit: Promise<void> = Promise.resolve();
  /** How many tracked transactions have not settled yet. */
  protected unsettled = 0;

  get read(): ReadView {
    return this.engine;
  }

  /** Sequence number of the last transaction applied here (for tests and diagnostics). */
  get seq(): number {
    return this.engine.seq;
  }

  /** A point-in-time copy of every collection (export; records are immutable). */
  dump(): Record<string, StoredRecord[]> {
    return this.engine.dump();
  }

  /** The declared index keys of a record of a bound collection (see StoreEngine.keysOf). */
  keysOf(collection: string, record: StoredRecord): string[] {
    return this.engine.keysOf(collection, record);
  }

  /** Whether the store takes writes now; when not, why and when it tries again. */
  health(): StoreHealth {
    return this.gate.health();
  }

  transaction<R>(fn: (tx: Tx) => R): Promise<R> {
    return this.refusal() ?? this.commit(fn);
  }

  /** A rejection when the store takes no transaction now (closed, or its write gate is down). */
  protected refusal(): Promise<never> | undefined {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    if (this.gate.isDown) return Promise.reject(this.gate.refusal());
    return undefined;
  }

  /** Runs `fn` and makes its changes durable (the driver's part of `transaction`). */
  protected abstract commit<R>(fn: (tx: Tx) => R): Promise<R>;

  /** Remembers `done` as the last commit (what `durable()` waits for), and returns it. */
  protected track<R>(done: Promise<R>): Promise<R> {
    this.unsettled++;
    const settled = () => void this.unsettled--;
    this.lastCommit = done.then(settled, settled);
    return done;
  }

  abstract durable(): Promise<void>;
  abstract close(): Promise<void>;
}
