import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/spawn.js';

/**
 * `pinbot bots list | head -1`: the reader closes the pipe after one line. The next write
 * fails with EPIPE; the command ends quietly (exit 0, nothing on stderr), not with a stack trace.
 */
describe('a closed stdout', () => {
  it.each([
    ['bots list', ['bots', 'list']],
    ['scenario validate', ['scenario', 'validate']],
  ])(
    '%s into a reader that is gone: exit 0, no stack trace',
    async (_what, args) => {
      const child = spawn(process.execPath, [join(ROOT, 'bin/pinbot.js'), ...args], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, NO_COLOR: '1' },
      });
      // the reader is gone before the command writes anything (starting takes far longer)
      child.stdout.destroy();
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      const [code] = await once(child, 'exit');
      expect(stderr).toBe('');
      expect(code).toBe(0);
    },
    60_000,
  );
});
