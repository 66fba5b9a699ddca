import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { StoreEngine } from '../core/engine.js';
import { JournalCorruptError, StoreDamagedError } from '../core/errors.js';
import { changeProblem, type StoreIntegrity } from '../core/integrity.js';
import { checkFormat } from './data-format.js';
import { keepDamagedCopy, replayJournal, type JournalEntry } from './journal.js';
import { SnapshotFile } from './snapshot-file.js';
import { declaredCollections } from '../core/types.js';
import { DATA_DIR, oldJournalName } from '../../util/data-dir.js';

/** The journal files of a data directory. */
export interface JournalFiles {
  live: string;
  /**
   * Journals moved aside by compactions whose snapshot is not written yet (or not known to be):
   * `journal.old.jsonl`, then `journal.old.2.jsonl`, … — replayed in that order, before `live`.
   */
  old: string[];
}

const OLD = /^journal\.old(?:\.(\d+))?\.jsonl$/;

/** Finds the journal files of `dir`. */
export function journalFiles(dir: string): JournalFiles {
  const old = readdirSync(dir)
    .map((name) => ({ name, m: OLD.exec(name) }))
    .filter((x) => x.m)
    .map((x) => ({ path: join(dir, x.name), n: x.m![1] ? Number(x.m![1]) : 1 }))
    .sort((a, b) => a.n - b.n);
  return { live: join(dir, DATA_DIR.journal), old: old.map((o) => o.path) };
}

/** The name the next journal moved aside gets. */
export function nextOldJournal(dir: string, old: readonly string[]): string {
  const n = old.length === 0 ? 1 : Number(OLD.exec(old[old.length - 1]!.slice(dir.length + 1))?.[1] ?? 1) + 1;
  return join(dir, oldJournalName(n));
}

export interface LoadOptions {
  integrity?: StoreIntegrity;
  warn: (msg: string, extra?: Record<string, unknown>) => void;
  /** Clock ms, for the names of kept copies. */
  now: number;
}

const SNAPSHOT_REMEDY =
  'Restore db.json from a backup (keep the journal files: they continue it), or the whole data directory';

/**
 * Loads a data directory into `engine`: the snapshot, then every journal line after it, with
 * the start-up checks — the snapshot's collections, records and invariant; each line's
 * checksum (journal.ts), sequence number (the first one follows the snapshot's, or is 1
 * without one; each next one follows the previous), changes (known collection, record shape)
 * and conserved quantity. Anything wrong throws a `StoreDamagedError` naming `file:line` and
 * what to do, after a copy of the damaged journal is kept. Returns the journals moved aside.
 */
export async function loadDataDir(
  engine: StoreEngine,
  dir: string,
  snapshot: SnapshotFile,
  o: LoadOptions,
): Promise<JournalFiles> {
  const integrity = o.integrity ?? {};
  const known = integrity.collections ? new Set([...integrity.collections, ...declaredCollections()]) : undefined;
  const snapSeq = await loadSnapshot(engine, snapshot, integrity, known);
  engine.seq = snapSeq;
  const files = journalFiles(dir);
  const apply = journalApplier(engine, integrity, known);
  let last: number | undefined; // sequence number of the last line read, in any file
  for (const file of [...files.old, ...(existsSync(files.live) ? [files.live] : [])]) {
    try {
      last = replayFile(file, { isOld: file !== files.live, last, snapSeq, snapshotFile: snapshot.file, apply, o });
    } catch (err) {
      if (err instanceof StoreDamagedError && !err.kept) throw err.withCopy(keepDamagedCopy(file, o.now));
      throw err;
    }
  }
  if (last !== undefined && last < snapSeq) {
    const file = files.old[files.old.length - 1]!;
    throw snapshotAhead(file, last, snapSeq, 'the journal files (journal.jsonl, journal.old*.jsonl)').withCopy(
      keepDamagedCopy(file, o.now),
    );
  }
  return files;
}

type Integrity = NonNullable<LoadOptions['integrity']>;

/**
 * Loads the snapshot (if any) into `engine` after checking its format, sequence number,
 * collections, records and invariant; returns the sequence number it ends at (0 without one). Internal.
 */
async function loadSnapshot(
  engine: StoreEngine,
  snapshot: SnapshotFile,
  integrity: Integrity,
  known: Set<string> | undefined,
): Promise<number> {
  const snap = await snapshot.read();
  if (!snap) return 0;
  const version = snap.schema_version;
  if (!Number.isSafeInteger(version) || version < 1)
    throw new StoreDamagedError(
      snapshot.file,
      `"schema_version" is ${JSON.stringify(version)}, not a whole number ≥ 1`,
      SNAPSHOT_REMEDY,
    );
  // older versions hold the same records (data-format.ts); a newer one is refused in one line
  checkFormat(version, snapshot.file);
  if (!Number.isSafeInteger(snap.seq) || snap.seq < 0)
    throw new StoreDamagedError(
      snapshot.file,
      `"seq" is ${JSON.stringify(snap.seq)}, not a whole number ≥ 0`,
      SNAPSHOT_REMEDY,
    );
  for (const [name, records] of Object.entries(snap.collections)) {
    if (known && !known.has(name))
      throw new StoreDamagedError(snapshot.file, `unknown collection "${name}"`, SNAPSHOT_REMEDY);
    const check = integrity.records && Object.hasOwn(integrity.records, name) ? integrity.records[name] : undefined;
    if (!check) continue;
    for (const r of records) {
      const why = check(r);
      if (why !== undefined) throw new StoreDamagedError(snapshot.file, `${name} ${r.id}: ${why}`, SNAPSHOT_REMEDY);
    }
  }
  engine.load(snap.collections);
  const why = integrity.verify?.((name) => engine.rawRecords(name));
  if (why !== undefined) throw new StoreDamagedError(snapshot.file, why, SNAPSHOT_REMEDY);
  return snap.seq;
}

/** Applies one journal line to `engine`, checking each change and the conserved quantity. Internal. */
function journalApplier(engine: StoreEngine, integrity: Integrity, known: Set<string> | undefined) {
  const conserved = integrity.conserved;
  const conservedIn = new Set(conserved?.collections ?? []);
  return (e: JournalEntry, where: string) => {
    let d = 0;
    for (const change of e.c) {
      const why = changeProblem(change, known, integrity.records);
      if (why !== undefined) throw new JournalCorruptError(where, why);
      const [name, id, record] = change;
      const before = engine.applyOne(name, id, record);
      if (conserved && conservedIn.has(name)) d += conserved.delta(name, before, record);
    }
    if (d !== 0)
      throw new JournalCorruptError(
        where,
        `this transaction changes ${conserved!.what} by ${d > 0 ? '+' : ''}${d}; every transaction keeps it unchanged`,
      );
    engine.seq = e.s;
  };
}

/**
 * Replays one journal file: each line must follow the previous one (`last`, across files), and
 * lines the snapshot already holds are skipped (only in a file a compaction moved aside).
 * Returns the sequence number of its last line. Internal.
 */
function replayFile(
  file: string,
  r: {
    isOld: boolean;
    last: number | undefined;
    snapSeq: number;
    snapshotFile: string;
    apply: (e: JournalEntry, where: string) => void;
    o: LoadOptions;
  },
): number | undefined {
  const { isOld, snapSeq } = r;
  let last = r.last;
  let skipped = false;
  replayJournal(
    file,
    (e, line) => {
      const where = `${file}:${line}`;
      if (last === undefined && e.s > snapSeq + 1) throw missingStart(where, e.s, snapSeq, r.snapshotFile);
      if (last !== undefined && e.s !== last + 1) {
        throw new JournalCorruptError(
          where,
          `transaction ${e.s} follows transaction ${last} (a line was deleted, repeated or moved)`,
        );
      }
      last = e.s;
      if (e.s <= snapSeq) {
        // Lines of a journal moved aside by a compaction whose snapshot is written: in it.
        if (!isOld) throw snapshotAhead(where, e.s, snapSeq, file);
        skipped = true;
        return;
      }
      if (skipped)
        throw new JournalCorruptError(
          where,
          `db.json (transaction ${snapSeq}) ends inside this file, not where a compaction cut the journal`,
        );
      r.apply(e, where);
    },
    { warn: r.o.warn, now: r.o.now },
  );
  return last;
}

/** The journal does not start where the snapshot ends. Internal. */
function missingStart(where: string, first: number, snapSeq: number, snapshotFile: string): StoreDamagedError {
  if (snapSeq === 0 && !existsSync(snapshotFile)) {
    return new StoreDamagedError(
      where,
      `db.json is missing, but the journal starts at transaction ${first}, not 1: ` +
        `transactions 1–${first - 1} are only in a snapshot`,
      `Put db.json back (from a backup) and keep the journal files; starting without ` +
        `it would lose every user and key it holds`,
    );
  }
  return new StoreDamagedError(
    where,
    `the journal starts at transaction ${first}, but db.json ends at ${snapSeq}: ` +
      `transactions ${snapSeq + 1}–${first - 1} are missing`,
    `db.json is older than the journal (restored from an old backup?). Put back the ` +
      `db.json that goes with this journal, or restore the whole data directory from ` +
      `one backup`,
  );
}

/** The snapshot is ahead of the journal (its lines would be skipped unseen). Internal. */
function snapshotAhead(where: string, seq: number, snapSeq: number, move: string): StoreDamagedError {
  return new StoreDamagedError(
    where,
    `db.json (transaction ${snapSeq}) is ahead of the journal (transaction ${seq}): ` +
      `the journal is older than the snapshot`,
    `If this directory is a copy taken while the server ran, db.json already holds ` +
      `these lines: move ${move} aside and start again. Otherwise restore the data ` +
      `directory from a backup`,
  );
}
