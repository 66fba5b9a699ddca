import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../clock/clock.js';
import type { LoadedScenario } from './load.js';
import type { RunListener, ScenarioResult, StepResult } from './runner.js';

/**
 * What a worker process runs: compiled, worker.js itself (no loader to start); from the sources
 * (tests, a checkout run with PINBOT_FROM_SOURCE=1), worker-entry.js, which registers tsx first.
 */
const WORKER_ENTRY = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? './worker-entry.js' : './worker.js', import.meta.url),
);

/** What a worker is started with (in its environment). Internal. */
export interface WorkerSetup {
  remote?: { url: string; keys: Record<string, string> };
  allowOutsideRoot?: boolean;
  /** `--seed N`: every scenario's seed. */
  seed?: number;
  coverage?: boolean;
}

/** Messages between the main process and a worker. Internal. */
export type ToWorker = { type: 'run'; index: number; file: string } | { type: 'stop' } | { type: 'exit' };
export type ToMain =
  | { type: 'ready' }
  | { type: 'start'; index: number }
  | { type: 'step'; index: number; step: StepResult }
  | { type: 'end'; index: number; result: ScenarioResult }
  | { type: 'error'; index: number; message: string };

/**
 * Runs scenarios in `threads` worker processes (one scenario at a time in each, the next one
 * sent to whichever worker is free), so `--parallel N` uses N cores. Processes, not threads:
 * an embedded server sets the process umask for its admin socket, which threads may not.
 * Each worker loads the scenario files itself; reports are told in this process, as for an
 * in-process run.
 */
export async function runInWorkers(
  scenarios: LoadedScenario[],
  o: {
    threads: number;
    bail?: boolean;
    remote?: WorkerSetup['remote'];
    allowOutsideRoot?: boolean;
    seed?: number;
    coverage?: boolean;
    listener: RunListener;
  },
): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = new Array(scenarios.length);
  let next = 0;
  let stopped = false;
  const workers: ChildProcess[] = [];
  const current = new Map<ChildProcess, number>();
  // when each scenario was sent to a worker: the start of one whose worker died
  const started = new Map<number, string>();
  const failed = (index: number, error: string): ScenarioResult => {
    const sc = scenarios[index]!;
    return {
      file: sc.file,
      name: sc.name,
      tags: sc.tags,
      seed: sc.seed,
      mode: o.remote ? 'remote' : 'embedded',
      status: 'failed',
      started: started.get(index) ?? new Date(systemClock.now()).toISOString(),
      ms: 0,
      clock: '',
      steps: [],
      error,
    };
  };
  await new Promise<void>((resolve) => {
    const finishIfDone = () => {
      const live = workers.filter((w) => w.exitCode === null && w.signalCode === null);
      if (current.size === 0 && (next >= scenarios.length || stopped || live.length === 0)) resolve();
    };
    const feed = (w: ChildProcess) => {
      if (stopped || next >= scenarios.length) return finishIfDone();
      const index = next++;
      current.set(w, index);
      started.set(index, new Date(systemClock.now()).toISOString());
      w.send({ type: 'run', index, file: scenarios[index]!.file } satisfies ToWorker);
    };
    const end = (w: ChildProcess, result: ScenarioResult) => {
      const index = current.get(w)!;
      current.delete(w);
      results[index] = result;
      o.listener.scenarioEnd?.(result);
      if (o.bail && result.status === 'failed' && !stopped) {
        stopped = true;
        for (const x of workers) if (x.connected) x.send({ type: 'stop' } satisfies ToWorker);
      }
    };
    for (let i = 0; i < Math.min(o.threads, scenarios.length); i++) {
      const w = fork(WORKER_ENTRY, [], {
        env: {
          ...process.env,
          PINBOT_SCENARIO_WORKER: JSON.stringify({
            remote: o.remote,
            allowOutsideRoot: o.allowOutsideRoot,
            seed: o.seed,
            coverage: o.coverage,
          } satisfies WorkerSetup),
        },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        execArgv: [],
      });
      workers.push(w);
      w.on('message', (m: ToMain) => {
        if (m.type === 'ready') return feed(w);
        const sc = scenarios[m.index]!;
        if (m.type === 'start') return o.listener.scenarioStart?.(sc);
        if (m.type === 'step') return o.listener.stepEnd?.(sc, m.step);
        end(w, m.type === 'end' ? m.result : failed(m.index, m.message));
        feed(w);
      });
      // a worker that dies fails the scenario it was running; the others go on
      w.on('exit', (code, signal) => {
        if (current.has(w))
          end(w, failed(current.get(w)!, `the scenario worker stopped (${signal ?? `exit ${code}`}) while running it`));
        finishIfDone();
      });
    }
  });
  await Promise.all(
    workers.map((w) =>
      w.exitCode !== null || w.signalCode !== null
        ? undefined
        : new Promise((r) => (w.once('exit', r), w.send({ type: 'exit' } satisfies ToWorker))),
    ),
  );
  return results.filter(Boolean);
}
