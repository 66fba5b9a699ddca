import { loadScenario, type LoadedScenario } from './load.js';
import { runScenario } from './runner.js';
import { builtinSteps } from './steps/index.js';
import type { ToMain, ToWorker, WorkerSetup } from './workers.js';
import { startTracing, stopTracing } from '../telemetry/tracing.js';

/**
 * The worker side of a parallel run (a child process): loads each scenario file it is sent
 * (the main process has validated them all), runs it on its own embedded server, and reports
 * as it goes. Internal.
 */
const setup = JSON.parse(process.env.PINBOT_SCENARIO_WORKER ?? '{}') as WorkerSetup;
const steps = builtinSteps();
const loaded = new Map<string, LoadedScenario>();
const stop = { stopped: false };
const post = (m: ToMain) => process.send!(m);

process.on('message', (m: ToWorker) => {
  if (m.type === 'stop') stop.stopped = true;
  else if (m.type === 'exit') void stopTracing().finally(() => process.disconnect());
  else void run(m.index, m.file);
});

async function run(index: number, file: string): Promise<void> {
  try {
    let sc = loaded.get(file);
    if (!sc) {
      const r = await loadScenario(file, {
        steps,
        remote: setup.remote ? { users: Object.keys(setup.remote.keys) } : undefined,
        allowOutsideRoot: setup.allowOutsideRoot,
      });
      if (!r.scenario) throw new Error(`${file} became invalid: ${r.problems[0]?.message ?? 'unknown problem'}`);
      if (setup.seed !== undefined) r.scenario.seed = setup.seed;
      loaded.set(file, (sc = r.scenario));
    }
    const result = await runScenario(sc, {
      remote: setup.remote,
      coverage: setup.coverage,
      stop,
      listener: {
        scenarioStart: () => post({ type: 'start', index }),
        stepEnd: (_sc, step) => post({ type: 'step', index, step }),
      },
    });
    post({ type: 'end', index, result });
  } catch (err) {
    post({ type: 'error', index, message: (err as Error).message });
  }
}

// OTEL_* reaches the workers too: each exports its scenarios' traces (docs/scenarios.md)
void startTracing().then(() => post({ type: 'ready' }));
