import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { observeId } from '../../util/ids.js';
import { Serial } from '../../util/serial.js';
import { StorageUnavailableError } from '../core/errors.js';
import type { StoreIntegrity } from '../core/integrity.js';
import { Listener } from './pg-listen.js';
import { checkSchemaName, ensureSchema } from './pg-schema.js';
import { applyEntries, checkState, fetchLog, outcomeUnknown, readState, replaceState } from './pg-sync.js';
import type { Change, Tx } from '../core/types.js';
import { WriteGate } from '../core/write-gate.js';
import { EngineStore } from '../core/engine-store.js';
import { commitBatch, type PgBatchContext, type PendingWrite } from './pg-batch.js';
import { metrics } from '../../telemetry/metrics.js';

/** The commit histogram's cell of this driver. Internal. */
const commitTime = metrics.storeCommit;
const commitCell = commitTime.cell('postgres');

export interface PgStoreOptions {
  /** postgres://user:password@host:port/database */
  url: string;
  /** Schema holding the tables (default `pinbot`). */
  schema?: string;
  /** Connections of this process (default 10). */
  poolSize?: number;
  /** Start-up checks supplied by the code above the store (collections, records, money). */
  integrity?: StoreIntegrity;
  warn?: (msg: string, extra?: Record<string, unknown>) => void;
  /** Clock ms for `health()`; default Date.now. */
  now?: () => number;
  /** After a connection failure: ms until the first retry, doubling up to `maxMs`. */
  retry?: { firstMs?: number; maxMs?: number };
  /**
   * How long `durable()` (what a read waits for) may wait for the database, in real ms
   * (default 5,000: `store.read_wait`); past it, it rejects with `StorageUnavailableError`.
   */
  readWaitMs?: number;
}

/** `store.read_wait`'s default. */
export const DEFAULT_READ_WAIT_MS = 5000;

/** Transactions sent in one commit at most. */
const MAX_BATCH = 256;

/**
 * The store on PostgreSQL, for several `pinbot serve` processes on one database. Each process
 * keeps the whole state in memory (the engine of the file store: same collections, indexes and
 * synchronous all-or-nothing transactions); PostgreSQL holds one table per collection and the
 * shared change log, and serialises commits.
 *
 * A commit runs the queued transaction functions on the local state at sequence N (taking their
 * changes back at once, so no reader sees them early), then calls `commit(N, …)` in PostgreSQL,
 * which locks the head row: if the head is still N, the rows and log entries are written in that
 * database transaction; if not, this process applies the log entries it missed and runs the
 * functions again (after 3 tries, under the head lock, so a batch always gets through). So every
 * transaction, money rules included, ran on the latest state: serializable by construction. A
 * function may run more than once; only its last run counts (functions only touch `tx`).
 *
 * Other processes' commits arrive by LISTEN/NOTIFY. `durable()` (awaited by the API before a
 * read is answered) waits for this process's commits and then for one look at the head started
 * after it was called: a read sees every write acknowledged, by any process, before it began.
 *
 * A lost connection during a commit leaves its outcome unknown: the batch waits (its requests
 * are not answered) until the database answers again and the log says whether it was written;
 * meanwhile new transactions and reads are refused (`StorageUnavailableError`, 503).
 *
 * @example
 * const store = await PgStore.open({ url: process.env.DATABASE_URL! });
 * await store.transaction((tx) => tx.col(Users).insert(user));
 */
export class PgStore extends EngineStore {
  readonly pool: pg.Pool;
  readonly schema: string;
  private queue: PendingWrite[] = [];
  private flushing: Promise<void> | undefined;
  /** Serialises changes to the engine: commits and catch-ups. */
  private readonly mutex = new Serial();
  private readonly tables = new Set<string>();
  private readonly listener: Listener;
  private readonly remote = new Set<(changes: readonly Change[]) => void>();
  private freshWaiters: Array<{ resolve: () => void; reject: (err: unknown) => void }> = [];
  private checking = false;
  protected readonly gate: WriteGate;
  private readonly origin = randomBytes(6).toString('hex');
  private batchNo = 0;
  /** What committing a batch needs of this store (pg-batch.ts). */
  private readonly batchContext: PgBatchContext;
  private readonly warn: NonNullable<PgStoreOptions['warn']>;

  private constructor(private readonly opts: PgStoreOptions) {
    super();
    this.schema = checkSchemaName(opts.schema ?? 'pinbot');
    this.warn = opts.warn ?? ((msg) => process.emitWarning(msg));
    this.pool = new pg.Pool({ connectionString: opts.url, max: opts.poolSize ?? 10 });
    // An idle connection that drops is replaced on the next query; it must not crash the process.
    this.pool.on('error', (err) => this.warn(`a PostgreSQL connection failed: ${err.message}`));
    // A connection cut while checked out (a transaction between queries) emits 'error' on the client
    // itself, which the pool only listens to while the client is idle: the query in flight fails
    // and is handled where it was made; the event alone must not become an uncaught error.
    this.pool.on('connect', (client) =>
      client.on('error', (err) => this.warn(`a PostgreSQL connection failed: ${err.message}`)),
    );
    this.gate = new WriteGate({
      now: opts.now ?? Date.now,
      warn: this.warn,
      retry: { firstMs: opts.retry?.firstMs ?? 500, maxMs: opts.retry?.maxMs ?? 10_000 },
      tryWrite: async () => (await this.pool.query('SELECT 1'), true),
      subject: 'the database',
      medium: 'the database',
      readsGoOn: false,
    });
    this.listener = new Listener({
      url: opts.url,
      schema: this.schema,
      onCommit: () => this.catchUpInBackground(),
      onError: (err) => {
        this.warn(`the PostgreSQL notification connection failed (${err.message}); reconnecting`);
        // /healthz says 503 until a test query succeeds (the database may be gone)
        if (!this.closed) this.gate.failed(err);
      },
    });
    this.batchContext = {
      engine: this.engine,
      pool: this.pool,
      schema: this.schema,
      tables: this.tables,
      gate: this.gate,
      warn: (msg) => this.warn(msg),
      nextOrigin: () => `${this.origin}:${++this.batchNo}`,
      applyRemote: (entries, head) => this.applyRemote(entries, head),
      reload: () => this.reload(),
      guard: (fn) => this.guard(fn),
    };
  }

  /** Connects, creates the tables when missing, loads and checks the state, and listens. */
  static async open(opts: PgStoreOptions): Promise<PgStore> {
    const store = new PgStore(opts);
    try {
      const client = await store.pool.connect();
      try {
        await ensureSchema(client, store.schema);
      } finally {
        client.release();
      }
      const state = await readState(store.pool, store.schema);
      checkState(state, store.schema, opts.integrity);
      store.engine.load(state.collections);
      store.engine.seq = state.head;
      for (const name of Object.keys(state.collections)) store.tables.add(name);
      for (const id of store.engine.maxIds()) observeId(id);
      await store.listener.start();
      await store.catchUp();
      return store;
    } catch (err) {
      store.closed = true;
      await store.listener.stop();
      await store.pool.end().catch(() => undefined);
      throw err;
    }
  }

  protected commit<R>(fn: (tx: Tx) => R): Promise<R> {
    const done = new Promise<R>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      this.kick();
    });
    return this.track(done);
  }

  /**
   * Resolves once this process's transactions so far are settled and the state here includes
   * every transaction committed (by any process) before the call. Rejects with
   * `StorageUnavailableError` when the database cannot be reached.
   */
  async durable(): Promise<void> {
    // known to be gone: at once (a commit whose outcome is unknown waits for the database to
    // come back; a read must not wait with it)
    if (this.gate.isDown) throw this.gate.refusal();
    await this.bounded(async () => {
      await this.lastCommit;
      await new Promise<void>((resolve, reject) => {
        this.freshWaiters.push({ resolve, reject });
        this.kickFresh();
      });
    });
  }

  /**
   * `work`, but rejected as soon as the database is known to be gone (the write gate goes down)
   * or after `readWaitMs` of real time without an answer (a database that stops answering
   * raises no error until TCP gives up, minutes later). Real time, as the write gate's retries:
   * the database recovers in the real world, also under a virtual clock. Internal.
   */
  private bounded(work: () => Promise<void>): Promise<void> {
    const waitMs = this.opts.readWaitMs ?? DEFAULT_READ_WAIT_MS;
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      let off = () => undefined as void;
      const done = (fn: () => void) => {
        clearTimeout(timer);
        off();
        fn();
      };
      off = this.gate.onDown(() => done(() => reject(this.gate.refusal())));
      timer = setTimeout(
        () =>
          done(() =>
            reject(
              new StorageUnavailableError(
                `it did not answer within ${waitMs / 1000} s`,
                this.opts.retry?.firstMs ?? 500,
                'the database',
              ),
            ),
          ),
        waitMs,
      );
      timer.unref();
      work().then(
        () => done(resolve),
        (err: unknown) => done(() => reject(err)),
      );
    });
  }

  /** One catch-up for every waiter that came before it started (coalesced). Internal. */
  private kickFresh(): void {
    if (this.checking || this.freshWaiters.length === 0) return;
    this.checking = true;
    const waiters = this.freshWaiters.splice(0);
    this.catchUp()
      .then(
        () => waiters.forEach((w) => w.resolve()),
        (err) => {
          if (outcomeUnknown(err)) this.gate.failed(err);
          const refusal = outcomeUnknown(err) ? this.gate.refusal() : err;
          waiters.forEach((w) => w.reject(refusal));
        },
      )
      .finally(() => {
        this.checking = false;
        this.kickFresh();
      });
  }

  /** Runs `fn` with the engine to itself. Internal. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.mutex.run(fn);
  }

  /**
   * Hears the commits of other processes once they are applied here (the embedded server wakes
   * its bots with them, as with its own). Returns the unsubscribe.
   */
  onRemoteCommit(listener: (changes: readonly Change[]) => void): () => void {
    this.remote.add(listener);
    return () => void this.remote.delete(listener);
  }

  /** Applies every log entry up to the head (reloading the tables after a gap). */
  private async catchUp(): Promise<void> {
    for (;;) {
      const { head, entries } = await fetchLog(this.pool, this.schema, this.engine.seq);
      if (head <= this.engine.seq) return;
      const complete = await this.exclusive(async () => {
        if (this.applyRemote(entries, head)) return this.engine.seq >= head;
        const state = await readState(this.pool, this.schema);
        replaceState(this.engine, state);
        for (const name of Object.keys(state.collections)) this.tables.add(name);
        return true;
      });
      if (complete) return;
    }
  }

  private kick(): void {
    if (this.flushing) return;
    this.flushing = this.exclusive(() => this.flushLoop()).finally(() => {
      this.flushing = undefined;
      if (this.queue.length > 0) this.kick();
    });
  }

  private async flushLoop(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH);
      try {
        const t0 = performance.now();
        await commitBatch(this.batchContext, batch);
        commitTime.observeIn(commitCell, (performance.now() - t0) / 1000);
      } catch (err) {
        if (batch.length === 1 || err instanceof StorageUnavailableError) {
          for (const p of batch) p.reject(err);
          continue;
        }
        // The database refused the batch (not the connection): one by one, so only the
        // transaction it refuses fails.
        for (const p of batch) await commitBatch(this.batchContext, [p]).catch((e: unknown) => p.reject(e));
      }
    }
  }

  /**
   * Applies other processes' log entries and tells the listeners of their commits (whichever
   * path applies them: a catch-up, or a commit that found the head moved). False on a gap (the
   * caller reloads; listeners hear nothing of what the gap held). Internal.
   */
  private applyRemote(entries: ReadonlyArray<[number, Change[]]>, head: number): boolean {
    const from = this.engine.seq;
    if (!applyEntries(this.engine, entries, head)) return false;
    for (const [seq, changes] of this.remote.size ? entries : []) {
      if (seq <= from || seq > this.engine.seq) continue;
      for (const l of this.remote) {
        try {
          l(changes);
        } catch (err) {
          this.warn(`a listener of other processes' commits failed: ${(err as Error).message}`);
        }
      }
    }
    return true;
  }

  /** Reloads every table (the log no longer reaches back to this state). Internal. */
  private async reload(): Promise<void> {
    const state = await this.guard(() => readState(this.pool, this.schema));
    replaceState(this.engine, state);
    for (const name of Object.keys(state.collections)) this.tables.add(name);
  }

  /** Runs a query; a lost connection turns into `StorageUnavailableError`. Internal. */
  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (!outcomeUnknown(err)) throw err;
      this.gate.failed(err);
      throw this.gate.refusal();
    }
  }

  /** A catch-up in the background (notifications), sharing the coalesced look at the head. */
  private catchUpInBackground(): void {
    if (this.closed) return;
    this.freshWaiters.push({ resolve: () => undefined, reject: () => undefined });
    this.kickFresh();
  }

  /** Waits for queued commits, then closes the connections. */
  async close(): Promise<void> {
    if (this.closed) return;
    while (this.flushing) await this.flushing;
    this.closed = true;
    this.gate.close();
    await this.listener.stop();
    await this.mutex.idle();
    await this.pool.end();
  }
}
