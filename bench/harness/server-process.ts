import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { detectCores } from './cores.js';
import { REPO } from './paths.js';

/** A server process under test (pinbot or a baseline), pinned to the server CPU. */
export interface ServerProcess {
  readonly name: string;
  readonly url: string;
  readonly pid: number;
  /** Milliseconds from spawn until the process printed its listening line. */
  readonly startupMs: number;
  /** Resident set size now and at its peak (VmHWM), in bytes; undefined where /proc is absent. */
  memory(): { rss: number; peak: number } | undefined;
  /** CPU time (user + system) used so far, in milliseconds; undefined where /proc is absent. */
  cpuMs(): number | undefined;
  /**
   * SIGTERM, then SIGKILL after `graceMs` (0: SIGKILL at once, for a throw-away copy of a big
   * store whose shutdown snapshot nobody needs); resolves when the process is gone.
   */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnServerOptions {
  /** Label used in errors. */
  name: string;
  /** Arguments to `node` (script first). */
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** How long to wait for the listening line. */
  timeoutMs?: number;
}

const LISTENING = /listening on (http:\/\/[^\s"']+)/;
const running = new Set<ChildProcess>();

// A bench that throws must not leave servers behind on the machine.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Reads a `Vm*:` field of /proc/PID/status in bytes. Internal. */
function procStatus(pid: number, field: string): number | undefined {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** User + system CPU time of a process from /proc/PID/stat, in ms. Internal. */
export function procCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime) are at 11 and 12 after the command name.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

/**
 * Spawns `node ARGS` on the server CPU and waits for a line containing
 * `listening on http://HOST:PORT` on stdout or stderr (pinbot's pino line and the baselines'
 * own line both match). Output is kept only for the error message of a failed start.
 *
 * @example
 * const srv = await spawnServer({ name: 'bare-read', args: ['bin/run-ts.js', 'bench/baselines/bare-read.ts'] });
 * await srv.stop();
 */
export function spawnServer({ name, args, env, timeoutMs = 60_000 }: SpawnServerOptions): Promise<ServerProcess> {
  // BENCH_CPU_PROF=DIR: every server (pinbot and the baselines alike, to compare them) writes a
  // V8 CPU profile into DIR/NAME when it stops
  const prof = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', '--cpu-prof-dir', join(process.env.BENCH_CPU_PROF, name)]
    : [];
  const [cmd, argv] = detectCores().wrap('server', process.execPath, [...prof, ...args]);
  const started = performance.now();
  const child = spawn(cmd, argv, { cwd: REPO, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let tail = '';
  return new Promise<ServerProcess>((resolve, reject) => {
    let done = false;
    const fail = (why: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${name}: ${why}\n--- last output ---\n${tail.slice(-3000)}`));
    };
    const timer = setTimeout(() => fail(`no "listening on" line within ${timeoutMs} ms`), timeoutMs);
    const onData = (chunk: Buffer) => {
      if (done) return;
      tail = (tail + chunk.toString()).slice(-8000);
      const m = LISTENING.exec(tail);
      if (!m) return;
      done = true;
      clearTimeout(timer);
      const startupMs = performance.now() - started;
      // Keep draining the pipes so a chatty server never blocks on a full pipe.
      tail = '';
      resolve(handle(name, child, m[1]!, startupMs));
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('error', (err) => fail(err.message));
    child.once('exit', (code, signal) => fail(`exited (${signal ?? code}) before listening`));
  });
}

function handle(name: string, child: ChildProcess, url: string, startupMs: number): ServerProcess {
  // With taskset the child is taskset, which execs node: the pid stays the same.
  const pid = child.pid!;
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  exited.then(() => running.delete(child));
  // BENCH_SERVER_LOGS=DIR keeps each server's output in DIR/NAME-PID.log (to see why a bench failed)
  if (process.env.BENCH_SERVER_LOGS) {
    const out = createWriteStream(join(process.env.BENCH_SERVER_LOGS, `${name}-${pid}.log`));
    child.stdout!.pipe(out);
    child.stderr!.pipe(out);
  } else {
    child.stdout!.resume();
    child.stderr!.resume();
  }
  return {
    name,
    url,
    pid,
    startupMs,
    memory() {
      const rss = procStatus(pid, 'VmRSS');
      const peak = procStatus(pid, 'VmHWM');
      return rss === undefined || peak === undefined ? undefined : { rss, peak };
    },
    cpuMs: () => procCpuMs(pid),
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // a profiled server writes its profile as it exits: never kill it outright
      if (process.env.BENCH_CPU_PROF && graceMs < 60_000) graceMs = 60_000;
      child.kill(graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
