import { mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Low } from 'lowdb';
import { observeId } from '../../util/ids.js';
import { Serial } from '../../util/serial.js';
import { committedWrites, StoreEngine } from '../core/engine.js';
import { Batch } from './batch.js';
import { openInFormat } from './data-format.js';
import { openAppendFile, probeWrites, type AppendFile, type OpenAppend } from './journal-file.js';
import { encodeEntryBytes } from './journal-line.js';
import { loadDataDir, nextOldJournal } from './load.js';
import { acquireLock } from './lock.js';
import { fsyncPath, SCHEMA_VERSION, SnapshotFile, type Snapshot } from './snapshot-file.js';
import type { Tx } from '../core/types.js';
import type { CommittedWrite, NotingStore } from '../core/commit-signal.js';
import { WriteGate } from '../core/write-gate.js';
import { EngineStore } from '../core/engine-store.js';
import type { FileStoreOptions } from './file-store-options.js';
import { DATA_DIR } from '../../util/data-dir.js';
import { metrics } from '../../telemetry/metrics.js';

/** What hears a noted transaction's writes once it is durable. Internal. */
type OnCommit = (writes: readonly CommittedWrite[]) => void;

/** The commit histogram's cell of this driver. Internal. */
const commitTime = metrics.storeCommit;
const commitCell = commitTime.cell('file');

export { SCHEMA_VERSION } from './snapshot-file.js';
export type { CompactionStep, FileStoreOptions } from './file-store-options.js';

/**
 * The durable store of a data directory: state in memory, each transaction's change set
 * appended to `journal.jsonl` and fsync'd before `transaction()` resolves, with group commit
 * (every transaction arriving during an fsync shares the next one). lowdb writes the snapshot
 * `db.json` (durably, see SnapshotFile) on compaction and on `close()`, after which the journal
 * is cut. Start-up loads the snapshot and replays the journal, checking both (load.ts).
 *
 * When the disk refuses a write (full, read-only, failing), every transaction not yet durable is
 * taken back and rejected with `StorageUnavailableError`, later ones are refused at once, reads
 * go on, and a test write is tried with back-off until the disk takes writes again.
 *
 * @example
 * const store = await FileStore.open('./data');
 * await store.transaction((tx) => tx.col(Users).insert(user));
 * await store.close();
 */
export class FileStore extends EngineStore implements NotingStore {
  private readonly snapshotFile: SnapshotFile;
  private journal!: AppendFile;
  /** Bytes of the live journal known to be on disk. */
  private journalBytes = 0;
  /** Takes the journal's size out of the metrics (on close). */
  private untrackJournal?: () => void;
  private durableSeq = 0;
  private snapshotBytes = 0;
  /** Journals moved aside whose snapshot is not written yet. */
  private oldFiles: string[] = [];
  /** The transactions committed in memory and not yet being written: the next group commit. */
  private next: Batch | undefined;
  private flushing: Promise<void> | undefined;
  private compacting: Promise<void> | undefined;
  /** Counts take-backs, so `durable()` knows whether what a read saw was undone. */
  private takeBacks = 0;
  protected readonly gate: WriteGate;
  /** The journal handle is unusable (a failed truncate or reopen): reopen it before writing. */
  private reopen = false;
  /** Access to the journal file (appends, rotation, recovery), one at a time. */
  private readonly journalTurns = new Serial();
  private readonly compactBytes: number;
  private readonly warn: NonNullable<FileStoreOptions['warn']>;
  private readonly hooks: NonNullable<FileStoreOptions['hooks']>;
  private readonly openAppend: OpenAppend;
  private readonly now: () => number;

  private constructor(
    readonly dir: string,
    private readonly release: () => void,
    private readonly opts: FileStoreOptions,
  ) {
    super();
    this.compactBytes = opts.compactBytes ?? 64 * 1024 * 1024;
    this.warn = opts.warn ?? ((msg) => process.emitWarning(msg));
    this.hooks = opts.hooks ?? {};
    this.openAppend = opts.openAppend ?? openAppendFile;
    this.now = opts.now ?? Date.now;
    this.gate = new WriteGate({
      now: this.now,
      warn: this.warn,
      retry: { firstMs: opts.retry?.firstMs ?? 1000, maxMs: opts.retry?.maxMs ?? 30_000 },
      tryWrite: () => this.journalTurns.run(() => this.recover()),
    });
    this.snapshotFile = new SnapshotFile(join(dir, DATA_DIR.snapshot));
  }

  private get journalPath() {
    return join(this.dir, DATA_DIR.journal);
  }

  /** Opens (creating if needed, mode 0700) the store of `dir`, taking its lock and replaying the journal. */
  static async open(dir: string, opts: FileStoreOptions = {}): Promise<FileStore> {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const release = acquireLock(dir);
    let store: FileStore | undefined;
    try {
      return await openInFormat(dir, (opts.now ?? Date.now)(), {
        open: async () => {
          store = new FileStore(dir, release, opts);
          await store.load();
          return store;
        },
        upgrade: (s) => s.compact(),
        warn: (msg, extra) => store!.warn(msg, extra),
      });
    } catch (err) {
      if (store?.journal) await store.journal.close().catch(() => undefined);
      release();
      throw err;
    }
  }

  private async load(): Promise<void> {
    rmSync(join(this.dir, DATA_DIR.writeProbe), { force: true });
    const files = await loadDataDir(this.engine, this.dir, this.snapshotFile, {
      integrity: this.opts.integrity,
      warn: this.warn,
      now: this.now(),
    });
    this.durableSeq = this.engine.seq;
    this.oldFiles = files.old;
    this.snapshotBytes = this.snapshotFile.size();
    // New ids must sort after every loaded one. Only each collection's greatest id needs a look
    // (ids of one collection share their prefix): decoding every id cost a regex and a decode
    // per record at start-up (1M messages in bench/startup).
    for (const id of this.engine.maxIds()) observeId(id);
    this.journal = await this.openAppend(this.journalPath);
    this.journalBytes = statSync(this.journalPath).size;
    this.untrackJournal = metrics.journalBytes.source(() => [{ labels: {}, value: this.journalBytes }]);
    if (this.oldFiles.length > 0) await this.compact();
  }

  /**
   * `transaction`, noting each write with the record it replaced; once the transaction is
   * durable, `onCommit` is given them (when there are any) before the caller is answered.
   */
  transactionNoted<R>(fn: (tx: Tx) => R, onCommit: (writes: readonly CommittedWrite[]) => void): Promise<R> {
    return this.refusal() ?? this.run(fn, onCommit);
  }

  protected commit<R>(fn: (tx: Tx) => R): Promise<R> {
    return this.run(fn, undefined);
  }

  /**
   * Runs `fn` on the engine and joins the next group commit with its line; once durable, its
   * writes (from its undo log, made then) go to `onCommit`.
   */
  private run<R>(fn: (tx: Tx) => R, onCommit: OnCommit | undefined): Promise<R> {
    let run: ReturnType<StoreEngine['run']> & { result: R };
    try {
      run = this.engine.run(fn);
    } catch (err) {
      return Promise.reject(err);
    }
    const result = run.result;
    if (run.changes.length === 0) return Promise.resolve(result);
    let batch = this.next;
    if (!batch) {
      this.next = batch = new Batch();
      // `durable()` waits for the newest batch: every transaction before it is in it or earlier
      this.track(batch.done);
    }
    batch.lines.push(encodeEntryBytes(this.engine.seq, run.changes));
    batch.undos.push(run.undo);
    batch.seq = this.engine.seq;
    this.kick();
    const undo = run.undo;
    return onCommit
      ? batch.done.then(() => {
          onCommit(committedWrites(undo));
          return result;
        })
      : batch.done.then(() => result);
  }

  /** Whether every transaction committed so far is durable or taken back: `durable()` would not wait. */
  isDurable(): boolean {
    return this.unsettled === 0;
  }

  /**
   * Resolves once every transaction committed so far is durable, so a read never answers with
   * state a crash could still take back. Rejects (StorageUnavailableError) when some of it was
   * taken back because the disk refused it.
   */
  async durable(): Promise<void> {
    const takeBacks = this.takeBacks;
    await this.lastCommit;
    if (this.takeBacks !== takeBacks) throw this.gate.refusal();
  }

  /** Starts a flush unless one runs; the running one picks up the queue when it ends. */
  private kick(): void {
    if (this.flushing) return;
    this.flushing = this.flushLoop().finally(() => {
      this.flushing = undefined;
      if (this.next && !this.gate.isDown) this.kick();
    });
  }

  private async flushLoop(): Promise<void> {
    while (this.next && !this.gate.isDown) {
      if (!(await this.journalTurns.run(() => this.writeQueued()))) return;
      if (this.journalBytes > Math.max(this.compactBytes, this.snapshotBytes) && !this.compacting && !this.closed) {
        void this.compact().catch((err) =>
          this.warn(
            `compaction failed (the journal keeps every write; it is retried later): ${(err as Error).message}`,
          ),
        );
      }
    }
  }

  /**
   * Appends and syncs every queued line (under the journal mutex). On failure every transaction
   * not yet durable is taken back; returns whether the lines are durable.
   */
  private async writeQueued(): Promise<boolean> {
    const batch = this.next;
    if (!batch) return true;
    this.next = undefined;
    const data = batch.data();
    try {
      const t0 = performance.now();
      await this.journal.append(data);
      await this.journal.sync();
      commitTime.observeIn(commitCell, (performance.now() - t0) / 1000);
    } catch (err) {
      await this.writeFailed(batch, err);
      return false;
    }
    this.journalBytes += data.length;
    this.durableSeq = batch.seq;
    batch.resolve();
    return true;
  }

  /**
   * The disk refused a write: takes back `batch` and the batch gathered after it (newest first,
   * in the same tick, so nothing runs on top of state being undone), refuses writes from now
   * on, cuts any partial append off the journal, then rejects them all.
   */
  private async writeFailed(batch: Batch | undefined, err: unknown): Promise<void> {
    const lost = [batch, this.next].filter((b) => b !== undefined);
    this.next = undefined;
    for (let b = lost.length - 1; b >= 0; b--) {
      const undos = lost[b]!.undos;
      for (let i = undos.length - 1; i >= 0; i--) this.engine.revert(undos[i]!);
    }
    this.engine.seq = this.durableSeq;
    this.takeBacks++;
    this.gate.failed(err);
    const refused = this.gate.refusal();
    try {
      await this.journal.truncate(this.journalBytes);
    } catch {
      this.reopen = true;
    }
    for (const b of lost) b.reject(refused);
  }

  /**
   * Puts the journal back to its last durable byte (reopening it if needed) and checks with a
   * test write that the disk takes writes (throws when not). Under the journal mutex.
   */
  private async recover(): Promise<boolean> {
    if (this.reopen) {
      await this.journal.close().catch(() => undefined);
      this.journal = await this.openAppend(this.journalPath);
      this.reopen = false;
    }
    if ((await this.journal.size()) > this.journalBytes) await this.journal.truncate(this.journalBytes);
    await this.journal.sync();
    await probeWrites(this.dir, this.openAppend);
    return true;
  }

  /**
   * Writes a snapshot of the current state and cuts the journal. The live journal is first
   * moved aside (journal.old.jsonl, or .old.N.jsonl while earlier ones wait for their
   * snapshot), so writes continue into a fresh one while lowdb writes `db.json`; a crash at any
   * point leaves snapshot + journals that replay to the same state.
   */
  compact(): Promise<void> {
    if (this.compacting) return this.compacting;
    if (this.gate.isDown) return Promise.reject(this.gate.refusal());
    this.compacting = (async () => {
      const { snapshot, moved } = await this.journalTurns.run(() => this.rotateJournal());
      await this.hooks.compaction?.('rotated');
      const db = new Low<Snapshot | null>(this.snapshotFile, snapshot);
      await db.write();
      this.snapshotBytes = this.snapshotFile.size();
      await this.hooks.compaction?.('snapshot-written');
      for (const f of moved) rmSync(f, { force: true });
      this.oldFiles = this.oldFiles.filter((f) => !moved.includes(f));
      await fsyncPath(this.dir);
    })().finally(() => {
      this.compacting = undefined;
    });
    return this.compacting;
  }

  /**
   * Writes every queued line, moves the live journal aside and opens a fresh one; returns the
   * snapshot of the state as of that moment — so the journal moved aside ends exactly at the
   * snapshot's sequence number and the fresh one starts right after it — and the journals the
   * snapshot makes redundant.
   */
  private async rotateJournal(): Promise<{ snapshot: Snapshot; moved: string[] }> {
    while (this.next) if (!(await this.writeQueued())) throw this.gate.refusal();
    if (this.gate.isDown) throw this.gate.refusal();
    const snapshot: Snapshot = {
      schema_version: SCHEMA_VERSION,
      seq: this.engine.seq,
      collections: this.engine.dump(),
    };
    // Transactions run from here on get later sequence numbers and go to the fresh journal.
    await this.journal.close();
    const old = nextOldJournal(this.dir, this.oldFiles);
    renameSync(this.journalPath, old);
    this.oldFiles.push(old);
    this.journalBytes = 0;
    try {
      this.journal = await this.openAppend(this.journalPath);
    } catch (err) {
      this.reopen = true;
      await this.writeFailed(undefined, err);
      throw err;
    }
    await fsyncPath(this.dir);
    return { snapshot, moved: [...this.oldFiles] };
  }

  /** Waits for pending writes, writes the snapshot, cuts the journal and releases the lock. */
  async close(): Promise<void> {
    this.untrackJournal?.();
    if (this.closed) return;
    this.closed = true;
    this.gate.close();
    try {
      while (this.flushing || this.compacting) {
        if (this.flushing) await this.flushing;
        if (this.compacting) await this.compacting.catch(() => undefined);
      }
      if (await this.gate.retryNow()) await this.compact();
      else
        this.warn(
          `closing without a snapshot: the disk still refuses writes ` +
            `(${this.gate.refusal().reason}); the journal holds every acknowledged ` +
            `write`,
        );
    } finally {
      await this.journal.close().catch(() => undefined);
      this.release();
    }
  }
}
