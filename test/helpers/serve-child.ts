import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export interface ServeChild {
  url: string;
  proc: ChildProcess;
  /** Every log line so far. */
  lines: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const ROOT = join(import.meta.dirname, '../..');

/**
 * Starts `pinbot serve` in a child process (port 0) and resolves once it listens.
 * Internal to tests that kill -9 a server.
 */
export function spawnServe(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 40_000): Promise<ServeChild> {
  const proc = spawn(process.execPath, [join(ROOT, 'bin/pinbot.js'), 'serve', '--port', '0', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  // a child outlives no test run: killed when this process exits (a test that timed out before
  // it could hand the child to its afterEach leaves it to this)
  const orphan = () => proc.kill('SIGKILL');
  process.once('exit', orphan);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('exit', (code, signal) => {
      process.removeListener('exit', orphan);
      resolve({ code, signal });
    }),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      // one that never listened is nobody's to stop: stop it here
      proc.kill('SIGKILL');
      reject(new Error(`serve did not start:\n${lines.join('\n')}`));
    }, timeoutMs);
    let buf = '';
    const onData = (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        lines.push(line);
        const m = /listening on (http:\/\/[^\s"]+)/.exec(line);
        if (m) {
          clearTimeout(timer);
          resolve({ url: m[1]!, proc, lines, exited });
        }
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    void exited.then((e) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${e.code ?? e.signal}) before listening:\n${lines.join('\n')}`));
    });
  });
}

/** Polls `fn` until it returns a truthy value (every 50 ms, up to `ms`). */
export async function eventually<T>(
  fn: () => Promise<T> | T,
  ms = 15_000,
  what = 'condition',
): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Kills every child with SIGKILL and waits until they are gone. */
export async function killAll(children: readonly ServeChild[]): Promise<void> {
  for (const c of children) c.proc.kill('SIGKILL');
  await Promise.all(children.map((c) => c.exited));
}
