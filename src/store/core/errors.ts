import { OperatorError } from '../../util/operator-error.js';
/**
 * Errors of the file store that an operator acts on. Each message is one line: where
 * (`file:line` when there is one), what is wrong, and what to do.
 */

/**
 * The data directory is damaged or inconsistent, so start-up is refused: a journal line that
 * fails its checksum or shape check, a gap in the sequence numbers, a missing or mismatched
 * snapshot, money that does not add up. `kept` names the copy of the journal made before
 * anything else happens, so whatever the operator does next, the original bytes survive.
 *
 * @example
 * throw new StoreDamagedError('data/journal.jsonl:812', 'checksum mismatch', 'Restore the data
 * directory from a backup.');
 */
export class StoreDamagedError extends OperatorError {
  constructor(
    readonly where: string,
    readonly problem: string,
    readonly remedy: string,
    readonly kept?: string,
  ) {
    super(`${where}: ${problem}. Start-up refused${kept ? ` (the journal is kept as ${kept})` : ''}. ${remedy}`);
    this.name = 'StoreDamagedError';
  }

  /** The same error, saying where the copy of the journal is. */
  withCopy(kept: string): StoreDamagedError {
    return new (this.constructor as typeof StoreDamagedError)(this.where, this.problem, this.remedy, kept);
  }
}

/** A damaged journal line followed by intact ones (not a write cut short by a crash). */
export class JournalCorruptError extends StoreDamagedError {
  constructor(where: string, problem: string, remedy: string = JOURNAL_REMEDY, kept?: string) {
    super(where, problem, remedy, kept);
    this.name = 'JournalCorruptError';
  }
}

/** What to do about a damaged journal line. Internal. */
export const JOURNAL_REMEDY =
  'Restore the data directory from a backup, or keep only the lines before this one ' +
  '(docs/operations.md, "When start-up refuses")';

/**
 * The store cannot write to its disk (full, read-only, failing). Nothing of the refused
 * transaction happened. Reads keep working; the store retries by itself and takes writes again
 * once a test write succeeds. `retryAfterMs` says when the next attempt is due.
 */
export class StorageUnavailableError extends Error {
  constructor(
    readonly reason: string,
    readonly retryAfterMs: number,
    /** What the store writes to: `its disk` (file store) or `the database` (PostgreSQL). */
    medium = 'its disk',
  ) {
    super(
      `the store cannot write to ${medium} (${reason}); nothing was changed. Retry ` +
        `in ${Math.max(1, Math.ceil(retryAfterMs / 1000))} s.`,
    );
    this.name = 'StorageUnavailableError';
  }
}

/**
 * The store holds a data format this pinbot does not read: written by a newer pinbot (a data
 * directory's `format` or `db.json` version, a PostgreSQL schema's table version), or a
 * `format` file that is not one. One line, saying what to do.
 */
export class DataFormatError extends OperatorError {
  constructor(message: string) {
    super(message);
    this.name = 'DataFormatError';
  }
}
