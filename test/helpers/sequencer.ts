import { existsSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestModule, TestSpecification } from 'vitest/node';
import { BaseSequencer } from 'vitest/node';
import { writeFileSync } from 'node:fs';
import { ROOT } from './spawn.js';

/** The recorded seconds of each test file, `project:path` (test/helpers/test-durations.json). */
export const DURATIONS_FILE = `${ROOT}test/helpers/test-durations.json`;

/** Files recorded as lasting at least this long start first, longest first, whatever project. */
const LONG_S = 5;

/** `project:path` of a file, as test-durations.json keys it. */
function key(project: string, moduleId: string): string {
  return `${project}:${relative(ROOT, moduleId).split('\\').join('/')}`;
}

function recorded(): Record<string, number> {
  if (!existsSync(DURATIONS_FILE)) return {};
  return (JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')) as { seconds: Record<string, number> }).seconds;
}

/**
 * The order the test files start in (vitest.config.ts `sequence.sequencer`). The run has two
 * workers; vitest's own order puts a project's files after the other's and, without its cache
 * (a fresh clone), larger files first — so the crash loop (a short file, the longest to run)
 * could start last and leave one worker running it alone for a minute. Here, by the durations
 * recorded in test-durations.json: files not recorded first (they may be long), then the long
 * ones longest first (either project), then the short files of the `postgres` project (each in
 * a process of its own), then the short `file` ones, longest first: the workers end together, and
 * the `file` files run back to back in a worker that is kept (a file of the other project in
 * between would make vitest start a new one). Order only: every file runs, as before.
 */
export class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = recorded();
    const at = (f: TestSpecification) => seconds[key(f.project.name, f.moduleId)];
    const rank = (f: TestSpecification) => {
      const s = at(f);
      if (s === undefined) return 0;
      if (s >= LONG_S) return 1;
      return f.project.name === 'postgres' ? 2 : 3;
    };
    return [...files].sort((a, b) => rank(a) - rank(b) || (at(b) ?? 0) - (at(a) ?? 0));
  }
}

/**
 * Writes how long each file took to test-durations.json, for the sequencer: run the whole suite
 * with `PINBOT_RECORD_DURATIONS=1 npx vitest run` once files were added or got much slower or
 * faster. Only a run that passed is recorded (a failing file may stop early).
 */
export class DurationRecorder implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, errors: ReadonlyArray<unknown>): void {
    if (errors.length || modules.some((m) => !m.ok())) return;
    const seconds: Record<string, number> = {};
    for (const m of modules) seconds[key(m.project.name, m.moduleId)] = Math.round(m.diagnostic().duration / 100) / 10;
    const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => (a < b ? -1 : 1)));
    writeFileSync(DURATIONS_FILE, `${JSON.stringify({ seconds: sorted }, null, 2)}\n`);
  }
}

export default DurationRecorder;
