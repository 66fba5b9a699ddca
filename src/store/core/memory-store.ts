import { committedWrites, StoreEngine } from './engine.js';
import type { CommittedWrite, NotingStore } from './commit-signal.js';
import type { ReadView, Tx } from './types.js';

/**
 * A store kept only in memory, for unit tests of domain rules. Same transaction semantics
 * as the file store; nothing survives the process.
 */
export class MemoryStore implements NotingStore {
  protected readonly engine = new StoreEngine();

  get read(): ReadView {
    return this.engine;
  }

  transaction<R>(fn: (tx: Tx) => R): Promise<R> {
    try {
      return Promise.resolve(this.engine.run(fn).result);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** `transaction`, giving its writes to `onCommit` once committed (see NotingStore). */
  transactionNoted<R>(fn: (tx: Tx) => R, onCommit: (writes: readonly CommittedWrite[]) => void): Promise<R> {
    let run: ReturnType<StoreEngine['run']> & { result: R };
    try {
      run = this.engine.run(fn);
    } catch (err) {
      return Promise.reject(err);
    }
    return Promise.resolve().then(() => {
      const writes = committedWrites(run.undo);
      if (writes.length) onCommit(writes);
      return run.result;
    });
  }

  durable(): Promise<void> {
    return Promise.resolve();
  }

  async close(): Promise<void> {}
}
