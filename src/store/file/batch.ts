import type { UndoLog } from '../core/engine.js';

/**
 * The transactions of one group commit: their journal lines and undo logs, and the one promise
 * they all wait on (a promise, an executor and closures per transaction were a fifth of a
 * write's garbage on the store side, bench/tools/write-core.ts). Internal to the file store.
 */
export class Batch {
  readonly lines: Buffer[] = [];
  readonly undos: UndoLog[] = [];
  /** The sequence number of its last transaction. */
  seq = 0;
  readonly done: Promise<void>;
  resolve!: () => void;
  reject!: (err: unknown) => void;

  constructor() {
    this.done = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** Its lines in one buffer (one append). */
  data(): Buffer {
    const lines = this.lines;
    if (lines.length === 1) return lines[0]!;
    let length = 0;
    for (const line of lines) length += line.length;
    const data = Buffer.allocUnsafe(length);
    let at = 0;
    for (const line of lines) at += line.copy(data, at);
    return data;
  }
}
