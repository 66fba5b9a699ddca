import type { Trace } from '../runtime/index.js';

/**
 * One step of a scenario run as the console shows it; the scenario runner's `StepResult` is
 * this and more (logs, curl, children), so the two cannot drift apart.
 */
export interface ScenarioStepView {
  /** Its number: `3`, or `5.2` for the second step of the fragment used by step 5. */
  id: string;
  label: string;
  status: 'passed' | 'failed' | 'skipped';
  /** Wall time it took. */
  ms: number;
  /** The scenario's clock when it ended (ISO). */
  clock: string;
  /** Where it is written: `file:line:col`. */
  where: string;
  error?: string;
  diff?: string;
  /** What it found, in words, as the terminal report shows it (`201`, `message jar → alice "Thanks!" after 5s`). */
  detail?: string;
  /** Lines of `log:` steps. */
  logs?: string[];
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
  /**
   * The scenario that recreates one run of a bot, as `pinbot bots trace NAME --scenario RUN`
   * writes it (`botFile`: absolute; the scenario names it from the scenarios folder). Throws an
   * Error saying what to do when the run cannot be recreated.
   */
  fromTrace(o: { traces: Trace[]; run: string; botFile: string }): string;
  /** The events a run can be recreated from (`transfer.received`, …). */
  readonly fromTraceEvents: readonly string[];
}
