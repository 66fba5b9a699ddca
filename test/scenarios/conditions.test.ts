import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadScenario } from '../../src/scenario/load.js';
import { builtinSteps } from '../../src/scenario/steps/index.js';
import { evalCondition } from '../../src/scenario/templates.js';
import { formatProblem } from '../../src/util/yaml-errors.js';
import { tempDir } from '../helpers/api.js';

/**
 * A scenario's `assert:` and `if:` never pass by mistake: a filter after a comparison (which
 * Liquid applies to the whole comparison's result) and the other forms Liquid reads otherwise
 * than written are refused at load with file:line:col, and fail if they are evaluated anyway
 * (issue 20, item 1).
 */

const tmp = tempDir('pinbot-scenario-conditions-');
afterAll(() => tmp.cleanup());
const steps = builtinSteps();

async function problems(text: string): Promise<string[]> {
  const dir = join(tmp.dir, String(Math.random()).slice(2));
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 's.yaml');
  writeFileSync(file, text);
  const r = await loadScenario(file, { steps });
  return r.problems.map((p) => formatProblem(p).replaceAll(dir, 'DIR'));
}

const head = 'name: t\nusers: { alice: {} }\nsteps:\n  - set: { before: 5 }\n';

describe('scenario conditions that Liquid would read otherwise than written', () => {
  it.each([
    [
      'assert: with a filter after a comparison (the issue: passes for any value)',
      `${head}  - assert: "before == before | minus: 3"\n`,
      new RegExp(
        String.raw`^DIR\/s\.yaml:5:13: steps\.1\.assert: invalid condition "before == ` +
          String.raw`before \| minus: 3": a filter after a comparison \("\| minus: 3"\) ` +
          String.raw`applies to the result of the whole expression.* — a condition takes no ` +
          String.raw`filter after an operator: compute the value first in a set: step`,
      ),
    ],
    [
      'if: with a filter after a comparison',
      `${head}  - log: x\n    if: "before < limit | default: 20"\n`,
      /^DIR\/s\.yaml:6:9: steps\.1\.if: invalid condition "before < limit \| default: 20": a filter after a comparison/,
    ],
    [
      'and before or',
      `${head}  - assert: "before > 1 and before < 3 or before == 9"\n`,
      /"and" before "or": Liquid groups from the right/,
    ],
    [
      'a {% if %} in a template',
      `${head}  - log: "{% if before > 1 | plus: 0 %}big{% endif %}"\n`,
      new RegExp(
        String.raw`^DIR\/s\.yaml:5:\d+: steps\.1\.log: invalid condition \{% if before > ` +
          String.raw`1 \| plus: 0 %\}: a filter after a comparison`,
      ),
    ],
  ])('%s', async (_what, text, re) => {
    const got = await problems(text);
    expect(
      got.some((p) => re.test(p)),
      got.join('\n'),
    ).toBe(true);
  });

  it('accepts a filter on a lone value, and the way the hint says', async () => {
    expect(
      await problems(
        `${head}  - set: { after: "{{ before | minus: 3 }}" }\n  - assert: "after == ` +
          `2"\n  - assert: "before | plus: 1"\n`,
      ),
    ).toEqual([]);
  });

  it('evaluated anyway, the form fails instead of holding', () => {
    expect(() => evalCondition('before == before | minus: 3', { before: 5 })).toThrow(/a filter after a comparison/);
    expect(evalCondition('before == 5', { before: 5 })).toBe(true);
  });
});
