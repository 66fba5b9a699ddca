import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadAll, runAll, scenarioFiles } from '../../src/scenario/run-all.js';
import type { ScenarioResult } from '../../src/scenario/runner.js';
import { failureText, flatSteps } from '../../src/scenario/reporters/types.js';
import { formatProblem } from '../../src/util/yaml-errors.js';
import { ROOT } from '../helpers/spawn.js';

/**
 * The project's own scenarios (test/scenarios/suite) and the shipped examples (scenarios/),
 * run as `pinbot scenario run` runs them: each on a fresh embedded server and virtual clock.
 */
const { files } = scenarioFiles([join(ROOT, 'test/scenarios/suite'), join(ROOT, 'scenarios')]);
const results = new Map<string, ScenarioResult>();

beforeAll(async () => {
  const { scenarios, problems } = await loadAll(files);
  expect(problems.map(formatProblem)).toEqual([]);
  for (const r of (await runAll(scenarios, { parallel: 2 })).results) results.set(r.file, r);
}, 120_000);

describe('the scenario suite', () => {
  it('has at least 20 scenarios of its own, and the shipped examples', () => {
    expect(files.filter((f) => f.includes('suite')).length).toBeGreaterThanOrEqual(20);
    expect(files.filter((f) => f.startsWith('scenarios')).length).toBeGreaterThanOrEqual(3);
  });

  it.each(files)('%s passes', (file) => {
    const r = results.get(file)!;
    const failed = flatSteps(r).find((s) => s.status === 'failed' && !s.children?.some((c) => c.status === 'failed'));
    expect(r.error ?? (failed ? failureText(r, failed) : ''), r.name).toBe('');
    expect(r.status).toBe('passed');
  });

  it('covers every endpoint of the OpenAPI document and every example bot', async () => {
    const { readFileSync, readdirSync } = await import('node:fs');
    const { openapiDocument } = await import('../../src/scenario/openapi-schemas.js');
    const text = files.map((f) => readFileSync(join(ROOT, f), 'utf8')).join('\n');
    const missing: string[] = [];
    for (const [path, ops] of Object.entries(openapiDocument().paths as Record<string, object>)) {
      for (const method of Object.keys(ops)) {
        const re = new RegExp(
          `request: ${method.toUpperCase()} ` +
            `${path.replace('/api/v1', '').replace(/\{[^}]+\}/g, '(\\{\\{[^}]*\\}\\}|[^\\s/]+)')}\\s*$`,
          'm',
        );
        if (!re.test(text)) missing.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(missing).toEqual([]);
    for (const bot of readdirSync(join(ROOT, 'bots'))) expect(text, bot).toContain(`bots/${bot}`);
  });
});
