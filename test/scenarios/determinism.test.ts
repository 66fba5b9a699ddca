import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAll, runAll, scenarioFiles } from '../../src/scenario/run-all.js';
import type { ScenarioResult, StepResult } from '../../src/scenario/runner.js';
import { ROOT } from '../helpers/spawn.js';

/** What must be the same on every run: each step's outcome, what it saw, and the virtual time. */
function fingerprint(r: ScenarioResult): unknown {
  const step = (s: StepResult): unknown => ({
    id: s.id,
    label: s.label,
    status: s.status,
    clock: s.clock,
    detail: s.detail,
    logs: s.logs?.map((l) => l.replace(/run \w+/, 'run')),
    error: s.error,
    children: s.children?.map(step),
  });
  return { status: r.status, clock: r.clock, steps: r.steps.map(step) };
}

describe('determinism', () => {
  it('each shipped scenario gives the same result on 20 runs', async () => {
    const { scenarios, problems } = await loadAll(scenarioFiles([join(ROOT, 'scenarios')]).files);
    expect(problems).toEqual([]);
    expect(scenarios.length).toBeGreaterThanOrEqual(3);
    const runs = scenarios.flatMap((s) => Array.from({ length: 20 }, () => s));
    const { results } = await runAll(runs, { parallel: 4 });
    for (const sc of scenarios) {
      const mine = results.filter((r) => r.file === sc.file).map(fingerprint);
      expect(mine).toHaveLength(20);
      expect(mine[0]).toMatchObject({ status: 'passed' });
      for (const f of mine) expect(f).toEqual(mine[0]);
    }
  }, 150_000); // 100 scenario runs: over a minute on a loaded 2-core machine
});
