import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/api.js';
import { spawnNode, spawnTs, type Child } from '../helpers/spawn.js';

const RACERS = 6;
const ROUNDS = 12;
/** Directories raced for in each round, one after the other: more races for one start-up. */
const DIRS = 4;

const cleanups: Array<() => void | Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The next line a racer prints after `seen` lines. */
async function nextLine(c: Child, seen: number): Promise<string> {
  await c.waitUntil((out) => out.split('\n').length - 1 > seen);
  return c.stdout().split('\n')[seen]!;
}

describe('stale-lock takeover (issue 13, item 9)', () => {
  it(`${RACERS} processes racing for stale locks: exactly one wins each, ${ROUNDS * DIRS} races`, {
    timeout: 60_000,
  }, async () => {
    const t = tempDir('pinbot-lock-race-');
    cleanups.push(t.cleanup);
    const dirs = Array.from({ length: DIRS }, (_, i) => join(t.dir, `data${i}`));
    for (const d of dirs) mkdirSync(d);
    const dead = spawnNode(['-e', '']);
    await dead.exited;
    const racers = Array.from({ length: RACERS }, () => spawnTs('test/helpers/lock-child.ts', []));
    cleanups.push(() => racers.forEach((r) => r.proc.kill('SIGKILL')));
    const seen = racers.map(() => 0);
    const ask = async (r: number, cmd: string) => {
      racers[r]!.proc.stdin.write(cmd + '\n');
      return nextLine(racers[r]!, seen[r]!++);
    };
    const outcomes: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Locks left by a crashed process: the old format (pid only) and the current one.
      for (const d of dirs)
        writeFileSync(join(d, 'pinbot.lock'), round % 2 ? `${dead.proc.pid}\n` : `${dead.proc.pid} 0123456789abcdef\n`);
      const at = Date.now() + 300;
      const answers = (await Promise.all(racers.map((_, r) => ask(r, `take ${at} ${dirs.join(' ')}`)))).map((a) =>
        a.split(' '),
      );
      dirs.forEach((d, i) => {
        const winners = answers.flatMap((a, r) => (a[i] === 'won' ? [r] : []));
        outcomes.push(`round ${round}, ${d}: ${answers.map((a) => a[i]).join(', ')}`);
        expect(winners, outcomes.join('\n')).toHaveLength(1);
        const winnerPid = racers[winners[0]!]!.proc.pid!;
        for (const a of answers) if (a[i] !== 'won') expect(a[i]).toBe(`locked:${winnerPid}`);
        expect(readFileSync(join(d, 'pinbot.lock'), 'utf8').trim().split(' ')[0]).toBe(String(winnerPid));
      });
      await Promise.all(racers.map((_, r) => ask(r, 'release')));
    }
  });
});
