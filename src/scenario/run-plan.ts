import { availableParallelism } from 'node:os';

/**
 * Up to this many scenarios, a run without `--parallel` stays in this process, one scenario at
 * a time: a worker process costs about 1.5 s of CPU to start (loading the TypeScript sources),
 * while a scenario of the project's suite takes 0.05–0.15 s of CPU — two workers only pay off
 * from about 20 scenarios. Measured in docs/scenarios.md#performance.
 */
export const IN_PROCESS_UP_TO = 16;

/** How a run goes: how many scenarios at once, and whether in this process or in workers. */
export interface RunPlan {
  parallel: number;
  inProcess: boolean;
}

/**
 * Chooses how to run `count` scenarios. An explicit `--parallel N` (N > 1) runs N worker
 * processes, as asked; without it, a suite of up to `IN_PROCESS_UP_TO` scenarios runs in this
 * process (one scenario at a time) and a larger one in one worker process per core.
 *
 * @example runPlan(3, {}) // { parallel: 1, inProcess: true }
 */
export function runPlan(count: number, o: { parallel?: number; inProcess?: boolean; cores?: number } = {}): RunPlan {
  const cores = o.cores ?? availableParallelism();
  if (o.parallel !== undefined) return { parallel: o.parallel, inProcess: o.inProcess === true || o.parallel === 1 };
  if (o.inProcess) return { parallel: cores, inProcess: true };
  if (count <= IN_PROCESS_UP_TO) return { parallel: 1, inProcess: true };
  return { parallel: cores, inProcess: false };
}
