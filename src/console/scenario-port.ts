/** One step of a scenario run as the console shows it. */
export interface ScenarioStepView {
  id: string;
  label: string;
  status: 'passed' | 'failed' | 'skipped';
  ms: number;
  /** The scenario's clock when it ended (ISO). */
  clock: string;
  /** `file:line:col`. */
  where: string;
  error?: string;
  diff?: string;
}

/** How a run ended: passed, failed (with why, when before any step), or invalid files. */
export interface ScenarioRunEnd {
  status: 'passed' | 'failed' | 'invalid';
  error?: string;
  problems?: string[];
}

/**
 * What the console needs to run the project's scenarios (the scenario runner sits above the
 * console, so `pinbot serve` hands it this): the files, and a run that tells each step as it ends.
 */
export interface ScenarioPort {
  /** The scenario files of the project (`scenarios/x.yaml`): what `run` takes. */
  files(): string[];
  run(file: string, onStep: (step: ScenarioStepView) => void): Promise<ScenarioRunEnd>;
}
