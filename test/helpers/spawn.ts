import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

/** The repository root (children run from here, as an operator would). */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A child process with its output collected as it arrives. */
export interface Child {
  proc: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the first match of `re` in stdout+stderr (rejects if the child exits first). */
  waitFor(re: RegExp): Promise<RegExpMatchArray>;
  /** Resolves once `test(stdout)` holds (rejects if the child exits first). */
  waitUntil(test: (stdout: string) => boolean): Promise<void>;
  /** Resolves with the exit code (or the signal name) once the child has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns `node ARGS…` from the repository root with piped stdio. */
export function spawnNode(args: string[], env: NodeJS.ProcessEnv = {}): Child {
  const proc = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env, NO_COLOR: '1' } });
  let out = '';
  let err = '';
  const waiters: Array<() => boolean> = [];
  const check = () => {
    for (const w of [...waiters]) if (w()) waiters.splice(waiters.indexOf(w), 1);
  };
  proc.stdout.setEncoding('utf8').on('data', (c: string) => ((out += c), check()));
  proc.stderr.setEncoding('utf8').on('data', (c: string) => ((err += c), check()));
  const exited = once(proc, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  return {
    proc,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(re) {
      return new Promise((resolve, reject) => {
        waiters.push(() => {
          const m = (out + '\n' + err).match(re);
          if (m) resolve(m);
          return m !== null;
        });
        check();
        void exited.then(({ code, signal }) =>
          reject(new Error(`child exited (${code ?? signal}) before printing ${re}\nstdout: ${out}\nstderr: ${err}`)),
        );
      });
    },
    waitUntil(test) {
      return new Promise((resolve, reject) => {
        waiters.push(() => {
          const ok = test(out);
          if (ok) resolve();
          return ok;
        });
        check();
        void exited.then(({ code, signal }) =>
          reject(
            new Error(
              `child exited (${code ?? signal}) before the awaited output\nstdout: ${out.slice(-2000)}\nstderr: ${err}`,
            ),
          ),
        );
      });
    },
  };
}

/** Runs `node bin/pinbot.js ARGS…` to completion. */
export async function pinbot(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnNode(['bin/pinbot.js', ...args], env);
  const { code } = await child.exited;
  return { code, stdout: child.stdout(), stderr: child.stderr() };
}

/** Starts `pinbot serve --port 0` on `dataDir` and waits for its `listening on` line. */
export async function serve(dataDir: string, extra: string[] = []): Promise<{ child: Child; url: string }> {
  const child = spawnNode(['bin/pinbot.js', 'serve', '--data', dataDir, '--port', '0', ...extra]);
  const m = await child.waitFor(/listening on (http:\/\/[\d.]+:\d+)/);
  return { child, url: m[1]! };
}

/** Runs a TypeScript file of the repository in a child (through tsx). */
export function spawnTs(file: string, args: string[]): Child {
  return spawnNode(['bin/run-ts.js', file, ...args]);
}
