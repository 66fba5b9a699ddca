import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, truncateSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Low } from 'lowdb';
import { DataFile } from 'lowdb/node';
import { observeId } from '../util/ids.js';
import { Engine } from './engine.js';
import { acquireLock } from './lock.js';
import type { Change, ReadView, Store, StoredRecord, Tx } from './types.js';

/** The part after the prefix of an id made by `newId`: time, counter, random (base32). */
const NEW_ID_BODY = /^[0-9a-hjkmnp-tv-z]{13}[0-9a-v]{8}$/;

/** The snapshot format version this code reads and writes. */
export const SCHEMA_VERSION = 1;

interface Snapshot {
  schema_version: number;
  seq: number;
  collections: Record<string, StoredRecord[]>;
}

interface JournalLine {
  s: number;
  c: Change[];
}

export interface FileStoreOptions {
  /** Compact (snapshot + cut the journal) once the journal passes this many bytes. */
  compactBytes?: number;
  /** Where warnings go (torn journal tail, compaction). */
  warn?: (msg: string, extra?: Record<string, unknown>) => void;
}

interface Pending {
  line: string;
  resolve: () => void;
  reject: (err: unknown) => void;
}

async function fsyncPath(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * The durable store of a data directory: state in memory, each transaction's change set
 * appended to `journal.jsonl` and fsync'd before `transaction()` resolves, with group commit
 * (every transaction arriving during an fsync shares the next one). lowdb writes the snapshot
 * `db.json` atomically on compaction and on `close()`, after which the journal is cut.
 *
 * @example
 * const store = await FileStore.open('./data');
 * await store.transaction((tx) => tx.col(Users).insert(user));
 * await store.close();
 */
export class FileStore implements Store {
  private readonly engine = new Engine();
  private journal!: FileHandle;
  private journalBytes = 0;
  private queue: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private compacting: Promise<void> | undefined;
  private failed: Error | undefined;
  private journalMutex: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly compactBytes: number;
  private readonly warn: NonNullable<FileStoreOptions['warn']>;

  private constructor(
    readonly dir: string,
    private readonly release: () => void,
    opts: FileStoreOptions,
  ) {
    this.compactBytes = opts.compactBytes ?? 64 * 1024 * 1024;
    this.warn = opts.warn ?? ((msg) => process.emitWarning(msg));
  }

  private get snapshotPath() {
    return join(this.dir, 'db.json');
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

  private async load(): Promise<void> {
    const db = new Low<Snapshot | null>(new DataFile<Snapshot | null>(this.snapshotPath, { parse: JSON.parse, stringify: JSON.stringify }), null);
    await db.read();
    let snapSeq = 0;
    if (db.data) {
      const version = db.data.schema_version;
      if (version !== SCHEMA_VERSION) {
        throw new Error(
          `${this.snapshotPath} has schema version ${version}; this pinbot reads version ${SCHEMA_VERSION}. ` +
            `Use the pinbot release that wrote it, or restore a backup.`,
        );
      }
      this.engine.load(db.data.collections);
      snapSeq = db.data.seq;
    }
    this.engine.seq = snapSeq;
    const hadOld = existsSync(this.oldJournalPath);
    if (hadOld) this.replay(this.oldJournalPath, snapSeq);
    if (existsSync(this.journalPath)) this.replay(this.journalPath, snapSeq);
    // New ids must sort after every loaded one. Ids of one collection share their prefix, so
    // each collection's greatest id is found by plain comparison (no string slicing per record:
    // this runs over every record at start-up); ids not made by newId (idempotency records are
    // `idem_<sha-256>`) carry no time and are skipped.
    let maxBody = '';
    let maxId = '';
    for (const id of this.engine.maxIds()) {
      const body = id.slice(id.indexOf('_') + 1);
      if (NEW_ID_BODY.test(body) && body > maxBody) {
        maxBody = body;
        maxId = id;
      }
    }
    if (maxId) observeId(maxId);
    this.journal = await open(this.journalPath, 'a');
    this.journalBytes = existsSync(this.journalPath) ? statSync(this.journalPath).size : 0;
    if (hadOld) await this.compact();
  }

  /** Applies the lines of one journal file past `afterSeq`; drops a torn last line. */
  private replay(path: string, afterSeq: number): void {
    const text = readFileSync(path, 'utf8');
    let offset = 0;
    let lineNo = 0;
    while (offset < text.length) {
      const nl = text.indexOf('\n', offset);
      const end = nl === -1 ? text.length : nl;
      const raw = text.slice(offset, end);
      lineNo++;
      let entry: JournalLine | undefined;
      try {
        entry = raw.trim() === '' ? undefined : (JSON.parse(raw) as JournalLine);
      } catch {
        entry = undefined;
        const last = nl === -1 || text.slice(nl + 1).trim() === '';
        if (!last) {
          throw new Error(
            `${path}:${lineNo} is corrupt (not the last line, so not a torn write). ` +
              `Restore a backup, or move the journal aside to start from the last snapshot.`,
          );
        }
        const goodBytes = Buffer.byteLength(text.slice(0, offset));
        this.warn(`${path}:${lineNo}: dropped a torn last line (an unacknowledged write cut short by a crash)`, {
          bytes: Buffer.byteLength(raw),
        });
        truncateSync(path, goodBytes);
        return;
      }
      if (entry && entry.s > afterSeq) {
        this.engine.apply(entry.c);
        this.engine.seq = entry.s;
      }
      offset = end + 1;
    }
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
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ line, resolve: () => resolve(run.result), reject });
      this.kick();
    });
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
      const data = batch.map((p) => p.line).join('');
      try {
        await this.withJournal(async () => {
          await this.journal.write(data);
          await this.journal.datasync();
          this.journalBytes += Buffer.byteLength(data);
        });
      } catch (err) {
        this.failed = new Error(`journal write failed; the store stopped accepting writes: ${(err as Error).message}`);
        for (const p of batch) p.reject(this.failed);
        for (const p of this.queue) p.reject(this.failed);
        this.queue = [];
        return;
      }
      for (const p of batch) p.resolve();
      if (this.journalBytes > this.compactBytes && !this.compacting) {
        void this.compact().catch((err) => this.warn(`compaction failed: ${(err as Error).message}`));
      }
    }
  }

  /**
   * Writes a snapshot of the current state and cuts the journal. The live journal is first
   * renamed aside, so writes continue into a fresh one while lowdb writes `db.json`; a crash at
   * any point leaves snapshot + journals that replay to the same state.
   */
  compact(): Promise<void> {
    if (this.compacting) return this.compacting;
    this.compacting = (async () => {
      const snapshot = await this.withJournal(async () => this.rotateJournal());
      const db = new Low<Snapshot>(new DataFile<Snapshot>(this.snapshotPath, { parse: JSON.parse, stringify: JSON.stringify }), snapshot);
      await db.write();
      await fsyncPath(this.snapshotPath);
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
        const live = readFileSync(this.journalPath);
        const fh = await open(this.oldJournalPath, 'a');
        await fh.write(live);
        await fh.sync();
        await fh.close();
        rmSync(this.journalPath);
      }
      const snapshot: Snapshot = { schema_version: SCHEMA_VERSION, seq: this.engine.seq, collections: this.engine.dump() };
      this.journal = await open(this.journalPath, 'a');
      this.journalBytes = 0;
      await fsyncPath(this.dir);
      return snapshot;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.flushing || this.compacting) {
      if (this.flushing) await this.flushing;
      if (this.compacting) await this.compacting;
    }
    if (!this.failed) await this.compact();
    await this.journal.close();
    this.release();
  }
}
