import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Low } from 'lowdb';
import { observeId } from '../util/ids.js';
import { Engine } from './engine.js';
import { appendAll, replayJournal } from './journal.js';
import { acquireLock } from './lock.js';
import { fsyncPath, SnapshotFile, type Snapshot } from './snapshot-file.js';
import type { Change, ReadView, Store, Tx } from './types.js';

/** The snapshot format version this code reads and writes. */
export const SCHEMA_VERSION = 1;

/** Steps of a compaction, for fault-injection tests (`hooks.compaction`). */
export type CompactionStep = 'rotated' | 'snapshot-written';

export interface FileStoreOptions {
  /**
   * Compact (snapshot + cut the journal) once the journal passes this many bytes — or the size of
   * the last snapshot, if larger, so that compaction work stays proportional to the bytes written
   * and a write's amortised cost does not grow with the store.
   */
  compactBytes?: number;
  /** Where warnings go (torn journal tail, compaction failures). */
  warn?: (msg: string, extra?: Record<string, unknown>) => void;
  /** Test-only: called at each compaction step (a test may kill the process there). */
  hooks?: { compaction?: (step: CompactionStep) => void | Promise<void> };
}

interface Pending {
  line: string;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * The durable store of a data directory: state in memory, each transaction's change set
 * appended to `journal.jsonl` and fsync'd before `transaction()` resolves, with group commit
 * (every transaction arriving during an fsync shares the next one). lowdb writes the snapshot
 * `db.json` (durably, see SnapshotFile) on compaction and on `close()`, after which the journal
 * is cut. Start-up loads the snapshot and replays the journal.
 *
 * @example
 * const store = await FileStore.open('./data');
 * await store.transaction((tx) => tx.col(Users).insert(user));
 * await store.close();
 */
export class FileStore implements Store {
  private readonly engine = new Engine();
  private readonly snapshotFile: SnapshotFile;
  private journal!: FileHandle;
  private journalBytes = 0;
  private snapshotBytes = 0;
  private queue: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private compacting: Promise<void> | undefined;
  /** Settles when the last transaction run so far is durable (or has failed). */
  private lastCommit: Promise<void> = Promise.resolve();
  private failed: Error | undefined;
  private journalMutex: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly compactBytes: number;
  private readonly warn: NonNullable<FileStoreOptions['warn']>;
  private readonly hooks: NonNullable<FileStoreOptions['hooks']>;

  private constructor(
    readonly dir: string,
    private readonly release: () => void,
    opts: FileStoreOptions,
  ) {
    this.compactBytes = opts.compactBytes ?? 64 * 1024 * 1024;
    this.warn = opts.warn ?? ((msg) => process.emitWarning(msg));
    this.hooks = opts.hooks ?? {};
    this.snapshotFile = new SnapshotFile(join(dir, 'db.json'));
  }

  private get journalPath() {
    return join(this.dir, 'journal.jsonl');
  }
  private get oldJournalPath() {
    return join(this.dir, 'journal.old.jsonl');
  }

  /** Opens (creating if needed) the store of `dir`, taking its lock and replaying the journal. */
  static async open(dir: string, opts: FileStoreOptions = {}): Promise<FileStore> {
    mkdirSync(dir, { recursive: true });
    const release = acquireLock(dir);
    try {
      const store = new FileStore(dir, release, opts);
      await store.load();
      return store;
    } catch (err) {
      release();
      throw err;
    }
  }

  get read(): ReadView {
    return this.engine;
  }

  /** Sequence number of the last committed transaction (for tests and diagnostics). */
  get seq(): number {
    return this.engine.seq;
  }

  private async load(): Promise<void> {
    const db = new Low<Snapshot | null>(this.snapshotFile, null);
    await db.read();
    let snapSeq = 0;
    if (db.data) {
      const version = db.data.schema_version;
      if (version !== SCHEMA_VERSION) {
        throw new Error(
          `${this.snapshotFile.file} has schema version ${version}; this pinbot reads version ${SCHEMA_VERSION}. ` +
            `Use the pinbot release that wrote it, or restore a backup.`,
        );
      }
      this.engine.load(db.data.collections);
      snapSeq = db.data.seq;
    }
    this.snapshotBytes = this.snapshotFile.size();
    this.engine.seq = snapSeq;
    const apply = (entry: { s: number; c: Change[] }) => {
      if (entry.s <= snapSeq) return; // already in the snapshot
      this.engine.apply(entry.c);
      this.engine.seq = entry.s;
    };
    // A compaction that did not finish leaves journal.old.jsonl: it holds the older lines.
    const hadOld = existsSync(this.oldJournalPath);
    if (hadOld) replayJournal(this.oldJournalPath, apply, this.warn);
    if (existsSync(this.journalPath)) replayJournal(this.journalPath, apply, this.warn);
    // New ids must sort after every loaded one. Only each collection's greatest id needs a look
    // (ids of one collection share their prefix): decoding every id cost a regex and a decode
    // per record at start-up (1M messages in bench/startup).
    for (const id of this.engine.maxIds()) observeId(id);
    this.journal = await open(this.journalPath, 'a', 0o600);
    this.journalBytes = statSync(this.journalPath).size;
    if (hadOld) await this.compact();
  }

  transaction<R>(fn: (tx: Tx) => R): Promise<R> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    let run: { result: R; changes: Change[] };
    try {
      run = this.engine.run(fn);
    } catch (err) {
      return Promise.reject(err);
    }
    if (run.changes.length === 0) return Promise.resolve(run.result);
    const line = JSON.stringify({ s: this.engine.seq, c: run.changes }) + '\n';
    const done = new Promise<R>((resolve, reject) => {
      this.queue.push({ line, resolve: () => resolve(run.result), reject });
      this.kick();
    });
    this.lastCommit = done.then(
      () => undefined,
      () => undefined,
    );
    return done;
  }

  /**
   * Resolves once every transaction committed so far is durable, so a read never answers with
   * state a crash could still take back. Rejects when the journal has failed.
   */
  async durable(): Promise<void> {
    await this.lastCommit;
    if (this.failed) throw this.failed;
  }

  /** Starts a flush unless one runs; the running one picks up the queue when it ends. */
  private kick(): void {
    if (this.flushing) return;
    this.flushing = this.flushLoop().finally(() => {
      this.flushing = undefined;
      if (this.queue.length > 0 && !this.failed) this.kick();
    });
  }

  private async flushLoop(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      const data = Buffer.from(batch.map((p) => p.line).join(''));
      try {
        await this.withJournal(async () => {
          await appendAll(this.journal, data);
          await this.journal.datasync();
          this.journalBytes += data.length;
        });
      } catch (err) {
        this.failed = new Error(`journal write failed; the store stopped accepting writes: ${(err as Error).message}`);
        for (const p of batch) p.reject(this.failed);
        for (const p of this.queue) p.reject(this.failed);
        this.queue = [];
        return;
      }
      for (const p of batch) p.resolve();
      if (this.journalBytes > Math.max(this.compactBytes, this.snapshotBytes) && !this.compacting && !this.closed) {
        void this.compact().catch((err) => this.warn(`compaction failed (the journal keeps every write; it is retried later): ${(err as Error).message}`));
      }
    }
  }

  /**
   * Writes a snapshot of the current state and cuts the journal. The live journal is first
   * renamed to journal.old.jsonl, so writes continue into a fresh one while lowdb writes
   * `db.json`; a crash at any point leaves snapshot + journals that replay to the same state.
   */
  compact(): Promise<void> {
    if (this.compacting) return this.compacting;
    this.compacting = (async () => {
      const snapshot = await this.withJournal(async () => this.rotateJournal());
      await this.hooks.compaction?.('rotated');
      const db = new Low<Snapshot | null>(this.snapshotFile, snapshot);
      await db.write();
      this.snapshotBytes = this.snapshotFile.size();
      await this.hooks.compaction?.('snapshot-written');
      rmSync(this.oldJournalPath, { force: true });
      await fsyncPath(this.dir);
    })().finally(() => {
      this.compacting = undefined;
    });
    return this.compacting;
  }

  /** Serialises access to the journal file handle (appends and rotation). Internal. */
  private withJournal<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.journalMutex.then(fn);
    this.journalMutex = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  /**
   * Moves the live journal aside and opens a fresh one; returns the snapshot of the state as
   * of that moment (queued transactions included: their lines go to the fresh journal with a
   * sequence number the snapshot already covers, so replay skips them).
   */
  private async rotateJournal(): Promise<Snapshot> {
    await this.journal.close();
    if (!existsSync(this.oldJournalPath)) renameSync(this.journalPath, this.oldJournalPath);
    else {
      // A previous compaction did not finish: keep its old journal and append the live one to it.
      const fh = await open(this.oldJournalPath, 'a');
      try {
        await appendAll(fh, readFileSync(this.journalPath));
        await fh.sync();
      } finally {
        await fh.close();
      }
      rmSync(this.journalPath);
    }
    const snapshot: Snapshot = { schema_version: SCHEMA_VERSION, seq: this.engine.seq, collections: this.engine.dump() };
    this.journal = await open(this.journalPath, 'a', 0o600);
    this.journalBytes = 0;
    await fsyncPath(this.dir);
    return snapshot;
  }

  /** Waits for pending writes, writes the snapshot, cuts the journal and releases the lock. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      while (this.flushing || this.compacting) {
        if (this.flushing) await this.flushing;
        if (this.compacting) await this.compacting.catch(() => undefined);
      }
      if (!this.failed) await this.compact();
    } finally {
      await this.journal.close().catch(() => undefined);
      this.release();
    }
  }
}
