import type { StoreIntegrity } from '../core/integrity.js';
import type { OpenAppend } from './journal-file.js';

/** Steps of a compaction, for fault-injection tests (`hooks.compaction`). */
export type CompactionStep = 'rotated' | 'snapshot-written';

/** How a FileStore is opened (all optional; tests use the seams). */
export interface FileStoreOptions {
  /**
   * Compact (snapshot + cut the journal) once the journal passes this many bytes — or the size of
   * the last snapshot, if larger, so that compaction work stays proportional to the bytes written
   * and a write's amortised cost does not grow with the store.
   */
  compactBytes?: number;
  /** Where warnings go (torn journal tail, compaction failures, a disk refusing writes). */
  warn?: (msg: string, extra?: Record<string, unknown>) => void;
  /** Start-up checks supplied by the code above the store (collections, records, money). */
  integrity?: StoreIntegrity;
  /** After a failed write: ms until the first test write, doubling up to `maxMs`. */
  retry?: { firstMs?: number; maxMs?: number };
  /** Test seam: how files are opened for appending (a wrapper can fail like a full disk). */
  openAppend?: OpenAppend;
  /** Clock ms (names of kept copies, since when writes fail); default Date.now. */
  now?: () => number;
  /** Test-only: called at each compaction step (a test may kill the process there). */
  hooks?: { compaction?: (step: CompactionStep) => void | Promise<void> };
}
