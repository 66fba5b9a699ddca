// The journal of the write baselines: lines appended to one file with group commit as pinbot's
// store does it — lines arriving during an fdatasync share the next write + fdatasync — each
// caller woken once the fdatasync that covers its line has returned.
import { open } from 'node:fs/promises';

/** Opens `path` for appending; `append(line)` resolves once the line is on disk. */
export async function groupCommit(path: string): Promise<{ append: (line: string) => Promise<void> }> {
  const file = await open(path, 'a');
  let queue: Array<{ line: string; done: () => void }> = [];
  let flushing = false;
  const flush = async () => {
    flushing = true;
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      await file.write(batch.map((p) => p.line).join(''));
      await file.datasync();
      for (const p of batch) p.done();
    }
    flushing = false;
  };
  return {
    append: (line) =>
      new Promise<void>((done) => {
        queue.push({ line, done });
        if (!flushing) void flush();
      }),
  };
}

/** A line of exactly 200 bytes (199 + newline) holding the sender, a counter and the content. */
export function journalLine(id: number, userId: string, content: string): string {
  const head = JSON.stringify({ s: id, u: userId, t: Date.now(), c: content });
  return (head.length >= 199 ? head.slice(0, 199) : head.padEnd(199, ' ')) + '\n';
}
