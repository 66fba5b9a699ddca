import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/api.js';
import { spawnNode, spawnTs, type Child } from '../helpers/spawn.js';

const RACERS = 6;
const ROUNDS = 12;

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
  it(`${RACERS} processes racing for a stale lock: exactly one wins, ${ROUNDS} rounds`, { timeout: 60_000 }, async () => {
    const t = tempDir('pinbot-lock-race-');
    cleanups.push(t.cleanup);
    const dead = spawnNode(['-e', '']);
    await dead.exited;
    const racers = Array.from({ length: RACERS }, () => spawnTs('test/helpers/lock-child.ts', []));
    cleanups.push(() => racers.forEach((r) => r.proc.kill('SIGKILL')));
    const seen = racers.map(() => 0);
    const ask = async (r: number, cmd: string) => {
      racers[r]!.proc.stdin.write(cmd + '\n');
      return nextLine(racers[r]!, seen[r]!++);
    };
    const lock = join(t.dir, 'pinbot.lock');
    const outcomes: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // A lock left by a crashed process: the old format (pid only) and the current one.
      writeFileSync(lock, round % 2 ? `${dead.proc.pid}\n` : `${dead.proc.pid} 0123456789abcdef\n`);
      const at = Date.now() + 300;
      const answers = await Promise.all(racers.map((_, r) => ask(r, `take ${t.dir} ${at}`)));
      const winners = answers.flatMap((a, r) => (a === 'won' ? [r] : []));
      outcomes.push(`round ${round}: ${answers.join(', ')}`);
      expect(winners, outcomes.join('\n')).toHaveLength(1);
      const winnerPid = racers[winners[0]!]!.proc.pid!;
      for (const a of answers) if (a !== 'won') expect(a).toBe(`locked ${winnerPid}`);
      expect(readFileSync(lock, 'utf8').trim().split(' ')[0]).toBe(String(winnerPid));
      expect(await ask(winners[0]!, 'release')).toBe('released');
    }
  });
});
