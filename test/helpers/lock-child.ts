// A child process for the lock race test: node bin/run-ts.js test/helpers/lock-child.ts
// Reads commands on stdin, one per line, and answers one line each:
//   take AT DIR…  — at clock time AT (ms, spinning for the last 2 ms so racers start together)
//                   tries to take the lock of each DIR in turn; answers one word per DIR,
//                   space-separated: `won`, `locked:PID` or `error:MESSAGE`
//   release       — releases every lock it holds: `released`
import { createInterface } from 'node:readline';
import { acquireLock, DataDirLockedError } from '../../src/store/file/lock.js';

const held: Array<() => void> = [];
const out = (line: string) => process.stdout.write(line + '\n');

for await (const line of createInterface({ input: process.stdin })) {
  const [cmd, at = '0', ...dirs] = line.split(' ');
  if (cmd === 'take') {
    const start = Number(at);
    await new Promise((r) => setTimeout(r, Math.max(0, start - Date.now() - 2)));
    while (Date.now() < start) {
      // spin: every racer leaves this loop within the same millisecond
    }
    const answers = dirs.map((dir) => {
      try {
        held.push(acquireLock(dir));
        return 'won';
      } catch (err) {
        return err instanceof DataDirLockedError
          ? `locked:${err.pid}`
          : `error:${(err as Error).message.replace(/\s/g, '_')}`;
      }
    });
    out(answers.join(' '));
  } else if (cmd === 'release') {
    for (const release of held.splice(0)) release();
    out('released');
  }
}
