// A child process for the lock race test: node bin/run-ts.js test/helpers/lock-child.ts
// Reads commands on stdin, one per line, and answers one line each:
//   take DIR AT  — at clock time AT (ms, spinning for the last 2 ms so racers start together)
//                  tries to take DIR's lock: `won`, `locked PID` or `error MESSAGE`
//   release      — releases a lock it won: `released`
import { createInterface } from 'node:readline';
import { acquireLock, DataDirLockedError } from '../../src/store/lock.js';

let release: (() => void) | undefined;
const out = (line: string) => process.stdout.write(line + '\n');

for await (const line of createInterface({ input: process.stdin })) {
  const [cmd, dir = '', at = '0'] = line.split(' ');
  if (cmd === 'take') {
    const start = Number(at);
    await new Promise((r) => setTimeout(r, Math.max(0, start - Date.now() - 2)));
    while (Date.now() < start) {
      // spin: every racer leaves this loop within the same millisecond
    }
    try {
      release = acquireLock(dir);
      out('won');
    } catch (err) {
      out(err instanceof DataDirLockedError ? `locked ${err.pid}` : `error ${(err as Error).message}`);
    }
  } else if (cmd === 'release') {
    release?.();
    release = undefined;
    out('released');
  }
}
