import { spawn, type ChildProcess } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (bin/pinbot.js lives there). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PINBOT = `${REPO_ROOT}bin/pinbot.js`;

/** A `pinbot serve` child process. */
export interface ServeProcess {
  url: string;
  pid: number;
  child: ChildProcess;
  /** Resolves with the exit code or signal once the process has exited. */
  exited: Promise<string>;
}

/** Thrown when `serve` exits or stays silent instead of listening: the store did not load. */
export class StartFailure extends Error {
  constructor(
    message: string,
    readonly output: string,
  ) {
    super(message);
    this.name = 'StartFailure';
  }
}

/**
 * Starts `node bin/pinbot.js serve --data DIR --port 0` and resolves once it logs `listening on
 * URL`. It runs in the folder of `configFile`, the loop's own project (as an operator runs it in
 * theirs), not in pinbot's checkout, whose example plugins (plugins/) it would load at every
 * start: the loop tests the store, and a start of its servers costs half the CPU without them. Every line it prints (pino JSON) is passed to `onLine`, so the caller can keep the logs
 * and search them.
 *
 * @example
 * const s = await startServe({ dataDir, configFile, onLine: (l) => logs.push(l) });
 * await killServe(s); // SIGKILL, then wait for the exit
 */
export function startServe(opts: {
  dataDir: string;
  configFile: string;
  onLine: (line: string) => void;
  timeoutMs?: number;
}): Promise<ServeProcess> {
  return spawnServe(opts).ready;
}

/**
 * Starts `serve` and SIGKILLs it after `delayMs`, whether or not it listens by then: a kill
 * during start-up (journal replay, compaction at open). Resolves once the process is gone.
 */
export async function killDuringStart(opts: {
  dataDir: string;
  configFile: string;
  onLine: (line: string) => void;
  delayMs: number;
}): Promise<void> {
  const s = spawnServe({ ...opts, timeoutMs: 60_000 });
  s.ready.catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, opts.delayMs));
  s.child.kill('SIGKILL');
  await s.exited;
}

/** Spawns `serve`; `ready` resolves once it listens. Internal. */
function spawnServe({
  dataDir,
  configFile,
  onLine,
  timeoutMs = 30_000,
}: {
  dataDir: string;
  configFile: string;
  onLine: (line: string) => void;
  timeoutMs?: number;
}) {
  const child = spawn(
    process.execPath,
    [PINBOT, 'serve', '--data', dataDir, '--config', configFile, '--port', '0', '--no-bots'],
    {
      cwd: dirname(configFile),
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    },
  );
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? String(code))),
  );
  let output = '';
  const ready = new Promise<ServeProcess>((resolve, reject) => {
    let done = false;
    const timer = setTimeout(() => fail(`serve did not listen within ${timeoutMs} ms`), timeoutMs);
    const fail = (why: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new StartFailure(why, output));
    };
    const lines = (chunk: Buffer, rest: { buf: string }) => {
      rest.buf += chunk.toString('utf8');
      let nl: number;
      while ((nl = rest.buf.indexOf('\n')) !== -1) {
        const line = rest.buf.slice(0, nl);
        rest.buf = rest.buf.slice(nl + 1);
        if (output.length < 200_000) output += line + '\n';
        onLine(line);
        const m = /listening on (http:\/\/[^\s"]+)/.exec(line);
        if (m && !done) {
          done = true;
          clearTimeout(timer);
          resolve({ url: m[1]!, pid: child.pid!, child, exited });
        }
      }
    };
    const out = { buf: '' };
    const err = { buf: '' };
    child.stdout!.on('data', (c: Buffer) => lines(c, out));
    child.stderr!.on('data', (c: Buffer) => lines(c, err));
    void exited.then((how) => fail(`serve exited (${how}) before listening`));
  });
  return { child, exited, ready };
}

/** SIGKILL (no chance to flush or snapshot) and wait until the process is gone. */
export async function killServe(s: ServeProcess): Promise<void> {
  s.child.kill('SIGKILL');
  await s.exited;
}

/** SIGTERM (a clean stop: in-flight requests finish, snapshot written) and wait for exit 0. */
export async function stopServe(s: ServeProcess): Promise<string> {
  s.child.kill('SIGTERM');
  return s.exited;
}

/** Runs `node bin/pinbot.js ARGS…` (the operator CLI) and resolves with its stdout. */
export function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [PINBOT, ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.once('exit', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}
