import { join } from 'node:path';

/**
 * The layout of a data directory in one place: every name pinbot makes under `--data`, so a
 * reader finds them here and docs/operations.md ("The data directory") can be checked against
 * them (test/util/data-dir.test.ts). In `util` because the store, the admin socket, the services,
 * the console, the CLI and the test kit all name these.
 */
export const DATA_DIR = {
  /** The data format of the directory, `{"format":N}`. */
  format: 'format',
  /** The snapshot of the file store. */
  snapshot: 'db.json',
  /** The journal of transactions since the snapshot. */
  journal: 'journal.jsonl',
  /** Marks bytes cut off or refused: `journal.jsonl.damaged-<time>`. */
  damagedSuffix: '.damaged-',
  /** A file tested when the disk refused a write. */
  writeProbe: '.write-probe',
  /** The process that has the directory open. */
  lock: 'pinbot.lock',
  /** The admin socket of a running server. */
  socket: 'pinbot.sock',
  /** Bot state: keys of embedded bots, traces. */
  bots: 'bots',
  /** The keys the web console acts as users with. */
  consoleKeys: 'console/keys',
  /** Copies of the directory before an upgrade: `backup-format-<N>-<time>`. */
  backupPrefix: 'backup-format-',
} as const;

/** Journals moved aside while a snapshot is written: `journal.old.jsonl`, `journal.old.2.jsonl`, … */
export function oldJournalName(n: number): string {
  return n === 1 ? 'journal.old.jsonl' : `journal.old.${n}.jsonl`;
}

/** A file written next to its final name, then renamed over it: `.db.json.tmp`. */
export function tmpName(name: string): string {
  return `.${name}.tmp`;
}

/** The keys folder of the bot state in a bots state dir (`<data>/bots/keys`). */
export function botKeysDir(stateDir: string): string {
  return join(stateDir, 'keys');
}

/**
 * The names of docs/operations.md's table as it writes them (first column), for its test:
 * each must be listed there.
 */
export const DOCUMENTED_ENTRIES: readonly string[] = [
  DATA_DIR.format,
  DATA_DIR.snapshot,
  DATA_DIR.journal,
  oldJournalName(1),
  oldJournalName(2),
  `${DATA_DIR.journal}${DATA_DIR.damagedSuffix}<time>`,
  tmpName(DATA_DIR.snapshot),
  DATA_DIR.writeProbe,
  DATA_DIR.lock,
  DATA_DIR.socket,
  `${DATA_DIR.bots}/`,
  `${DATA_DIR.backupPrefix}N-<time>/`,
  `${DATA_DIR.consoleKeys}/`,
];

/**
 * The trace history of a bot in a bots state dir: `traces/<bot>.jsonl` (`remote/traces/` for a
 * bot on another server). */
export function botTraceFile(stateDir: string, bot: string, remote: boolean): string {
  return join(stateDir, remote ? 'remote/traces' : 'traces', `${bot}.jsonl`);
}
