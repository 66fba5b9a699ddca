import { relative, resolve } from 'node:path';
import type { ScenarioPort, ScenarioStepView } from '../console/scenario-port.js';
import { formatProblem } from '../util/yaml-errors.js';
import { SCENARIO_EVENTS, scenarioFromTrace } from './from-trace.js';
import { loadAll, scenarioFiles } from './run-all.js';
import { runScenario, type StepResult } from './runner.js';

/**
 * The project's scenarios for the web console: the files of `dir` (fragments left out), each run
 * in this process on its own embedded server and virtual clock, as `pinbot scenario run` does.
 *
 * @example consoleService({ scenarios: scenarioPort('scenarios') })
 */
export function scenarioPort(dir: string): ScenarioPort {
  // shown as `scenarios/x.yaml`: relative to the folder that holds the scenarios folder
  const base = resolve(dir, '..');
  return {
    files: () => scenarioFiles([dir]).files.map((f) => relative(base, resolve(f))),
    async run(file, onStep) {
      const { scenarios, problems } = await loadAll([resolve(base, file)]);
      if (problems.length || !scenarios[0]) return { status: 'invalid', problems: problems.map(formatProblem) };
      const view = (s: StepResult): ScenarioStepView => ({
        id: s.id,
        label: s.label,
        status: s.status,
        ms: s.ms,
        clock: s.clock,
        where: s.where,
        error: s.error,
        diff: s.diff,
        detail: s.detail,
        logs: s.logs,
      });
      // a fragment's steps are shown as the terminal report shows them: each under its use: step
      const each = (s: StepResult): void => {
        onStep(view(s));
        for (const c of s.children ?? []) each(c);
      };
      const result = await runScenario(scenarios[0], { listener: { stepEnd: (_sc, s) => each(s) } });
      return { status: result.status, error: result.error };
    },
    // paths in a scenario are relative to its file: the scenarios folder, as the CLI writes them
    fromTrace: (o) => scenarioFromTrace({ ...o, botFile: relative(resolve(dir), resolve(o.botFile)), dir }),
    fromTraceEvents: SCENARIO_EVENTS,
  };
}
