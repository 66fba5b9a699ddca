import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parse } from 'yaml';
import type { FileProblem } from '../util/yaml-errors.js';
import { loadScenario, type LoadedScenario } from './load.js';
import type { Reporter, Summary } from './reporters/types.js';
import { runScenario, type RunListener, type RunScenarioOptions, type ScenarioResult } from './runner.js';
import type { StepRegistry } from './step-registry.js';
import { builtinSteps } from './steps/index.js';
import { runInWorkers } from './workers.js';

/**
 * The scenario files named by the arguments: files as given; folders searched for *.yaml and
 * *.yml, skipping folders named `fragments` (fragments run only through `use:`). Sorted, so
 * every run sees the same order.
 */
export function scenarioFiles(args: string[]): { files: string[]; missing: string[] } {
  const files: string[] = [];
  const missing: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'fragments' && e.name !== 'node_modules' && !e.name.startsWith('.')) walk(p);
      } else if (/\.ya?ml$/.test(e.name)) files.push(p);
    }
  };
  for (const a of args) {
    if (!existsSync(a)) missing.push(a);
    else if (statSync(a).isDirectory()) walk(a);
    else files.push(a);
  }
  const cwd = process.cwd();
  return { files: [...new Set(files.map((f) => relative(cwd, resolve(f)) || f))], missing };
}

/** Reads a keys file: `user name: API key` per line (YAML). */
export function readKeysFile(file: string): Record<string, string> {
  let data: unknown;
  try {
    data = parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`--keys ${file}: ${(err as Error).message.split('\n')[0]}`);
  }
  if (
    !data ||
    typeof data !== 'object' ||
    Array.isArray(data) ||
    !Object.values(data).every((v) => typeof v === 'string' && v.length > 0)
  ) {
    throw new Error(
      `--keys ${file}: expected a mapping of user name → API key, like\n  alice: pinbot_…\n  jar: pinbot_…`,
    );
  }
  return data as Record<string, string>;
}

/** Loads every file; the problems of all of them, or the scenarios when there are none. */
export async function loadAll(
  files: string[],
  o: { steps?: StepRegistry; remoteUsers?: string[]; allowOutsideRoot?: boolean } = {},
): Promise<{ scenarios: LoadedScenario[]; problems: FileProblem[] }> {
  const steps = o.steps ?? builtinSteps();
  const scenarios: LoadedScenario[] = [];
  const problems: FileProblem[] = [];
  for (const f of files) {
    const r = await loadScenario(f, {
      steps,
      remote: o.remoteUsers ? { users: o.remoteUsers } : undefined,
      allowOutsideRoot: o.allowOutsideRoot,
    });
    problems.push(...r.problems);
    if (r.scenario) scenarios.push(r.scenario);
  }
  return { scenarios, problems };
}

export interface RunAllOptions {
  /** Scenarios at once (default: the number of cores). */
  parallel?: number;
  /** Only scenarios whose name matches. */
  grep?: RegExp;
  /** Only scenarios with one of these tags. */
  tags?: string[];
  /** After the first failure, start no more scenarios and skip the rest of running ones. */
  bail?: boolean;
  remote?: { url: string; keys: Record<string, string> };
  reporters?: Reporter[];
  /** The worker processes load the scenarios again: as trusting as the main one (`--allow-outside-root`). */
  allowOutsideRoot?: boolean;
  /**
   * Run in `parallel` worker processes (several cores) instead of concurrently in this process
   * (the name predates processes). */
  threads?: boolean;
  /** `--keep`: failed scenarios' servers are left up and handed here (runs in this process). */
  keep?: RunScenarioOptions['keep'];
  /** `--seed N`: every scenario's seed (its PINs, ids, keys and run_id), instead of its own. */
  seed?: number;
  /** `--coverage`: each result carries what its run exercised. */
  coverage?: boolean;
}

/** Which scenarios a run selects (--grep, --tag). */
export function selectScenarios(all: LoadedScenario[], o: Pick<RunAllOptions, 'grep' | 'tags'>): LoadedScenario[] {
  return all.filter(
    (s) => (!o.grep || o.grep.test(s.name)) && (!o.tags?.length || s.tags.some((t) => o.tags!.includes(t))),
  );
}

/**
 * Runs scenarios, `parallel` at a time, each on its own embedded server and clock — in this
 * process, or with `threads` in as many worker processes; tells the reporters as it goes and gives
 * them the results (in the scenarios' order) at the end.
 */
export async function runAll(
  scenarios: LoadedScenario[],
  o: RunAllOptions = {},
): Promise<{ results: ScenarioResult[]; summary: Summary }> {
  const parallel = Math.max(1, o.parallel ?? availableParallelism());
  const reporters = o.reporters ?? [];
  const listener: RunListener = {
    scenarioStart: (sc) => reporters.forEach((r) => r.scenarioStart?.(sc)),
    stepEnd: (sc, s) => reporters.forEach((r) => r.stepEnd?.(sc, s)),
    scenarioEnd: (res) => reporters.forEach((r) => r.scenarioEnd?.(res)),
  };
  const t0 = performance.now();
  if (o.seed !== undefined) for (const s of scenarios) s.seed = o.seed;
  let done: ScenarioResult[];
  // a kept server must live in this process: --keep runs here
  if (o.threads && !o.keep && parallel > 1 && scenarios.length > 1) {
    done = await runInWorkers(scenarios, {
      threads: parallel,
      bail: o.bail,
      remote: o.remote,
      allowOutsideRoot: o.allowOutsideRoot,
      seed: o.seed,
      coverage: o.coverage,
      listener,
    });
  } else {
    const results: ScenarioResult[] = new Array(scenarios.length);
    const stop = { stopped: false };
    let next = 0;
    const worker = async () => {
      while (next < scenarios.length && !stop.stopped) {
        const i = next++;
        results[i] = await runScenario(scenarios[i]!, {
          remote: o.remote,
          listener,
          stop,
          keep: o.keep,
          coverage: o.coverage,
        });
        if (o.bail && results[i]!.status === 'failed') stop.stopped = true;
      }
    };
    await Promise.all(Array.from({ length: Math.min(parallel, scenarios.length) }, worker));
    done = results.filter(Boolean);
  }
  const summary: Summary = {
    total: done.length,
    passed: done.filter((r) => r.status === 'passed').length,
    failed: done.filter((r) => r.status === 'failed').length,
    ms: Math.round(performance.now() - t0),
    parallel: Math.max(1, Math.min(parallel, scenarios.length)),
  };
  for (const r of reporters) await r.finish(done, summary);
  return { results: done, summary };
}
