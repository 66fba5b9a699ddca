import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/api.js';
import { ROOT } from '../helpers/spawn.js';

const cleanups: Array<() => void> = [];
afterAll(() => cleanups.splice(0).forEach((c) => c()));

describe('pinbot serve stops (issue 13, item 12)', () => {
  it('exits on SIGTERM even when stdout’s reader stalls and then dies during the exit flush', {
    timeout: 60_000,
  }, async () => {
    const tmp = tempDir('pinbot-stop-');
    cleanups.push(tmp.cleanup);
    const config = join(tmp.dir, 'config.yaml');
    writeFileSync(config, 'log: { level: debug }\nrate_limits: { enabled: false }\n');
    const child = spawn(
      process.execPath,
      ['bin/pinbot.js', 'serve', '--port', '0', '--no-bots', '--data', join(tmp.dir, 'data'), '--config', config],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    cleanups.push(() => child.kill('SIGKILL'));
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      const onData = (c: Buffer) => {
        out += c.toString('utf8');
        const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(out);
        if (m) {
          child.stdout!.off('data', onData);
          resolve(m[1]!);
        }
      };
      child.stdout!.on('data', onData);
      void exited.then(() => reject(new Error(`serve exited early:\n${out}`)));
    });
    // The reader stops reading: the pipe fills, the server's log lines queue up in its memory.
    child.stdout!.pause();
    const junk = 'x'.repeat(2000);
    for (let i = 0; i < 30; i++)
      await Promise.all(Array.from({ length: 10 }, () => fetch(`${url}/nowhere/${junk}`).then((r) => r.arrayBuffer())));
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    // …and then dies: every further write to stdout fails with EPIPE.
    child.stdout!.destroy();
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const [code, signal] = await exited;
    clearTimeout(timer);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
  });
});
