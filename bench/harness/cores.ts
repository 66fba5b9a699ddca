import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * Which CPUs the server under test and the load generator run on. With `taskset` and at least
 * two CPUs the server gets CPU 0 and the generator every other CPU, so they never compete for a
 * core; without it both run wherever the OS puts them (the figures are then noisier, and the
 * table says so).
 *
 * @example
 * const cores = detectCores();
 * spawn(...cores.wrap('server', 'node', ['server.js']));
 */
export interface Cores {
  /** True when processes are pinned. */
  readonly pinned: boolean;
  /** A one-line description for the table header. */
  readonly describe: string;
  /** The command and arguments to run `cmd args` on the CPUs of `role`. */
  wrap(role: 'server' | 'load', cmd: string, args: readonly string[]): [string, string[]];
}

let cached: Cores | undefined;

/** Detects taskset and the CPU count once per run. */
export function detectCores(): Cores {
  if (cached) return cached;
  const cpus = availableParallelism();
  const hasTaskset = process.platform === 'linux' && spawnSync('taskset', ['-c', '0', 'true']).status === 0;
  if (!hasTaskset || cpus < 2) {
    const why = !hasTaskset ? 'taskset not found' : 'only one CPU';
    cached = {
      pinned: false,
      describe: `not pinned (${why}); ${cpus} CPU(s)`,
      wrap: (_r, cmd, args) => [cmd, [...args]],
    };
    return cached;
  }
  const load = cpus === 2 ? '1' : `1-${cpus - 1}`;
  cached = {
    pinned: true,
    describe: `server on CPU 0, load generator on CPU ${load} (taskset)`,
    wrap: (role, cmd, args) => ['taskset', ['-c', role === 'server' ? '0' : load, cmd, ...args]],
  };
  return cached;
}
