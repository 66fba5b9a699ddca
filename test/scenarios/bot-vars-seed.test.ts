import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAll, runAll } from '../../src/scenario/run-all.js';
import type { ScenarioResult } from '../../src/scenario/runner.js';
import { ROOT } from '../helpers/spawn.js';

const FIXTURE = join(ROOT, 'test/fixtures/confidence');
const OWNER = join(FIXTURE, 'scenarios/owner.yaml');

const logs = (r: ScenarioResult) => r.steps.flatMap((s) => s.logs ?? []);

async function runOwner(seed?: number): Promise<ScenarioResult> {
  const { scenarios, problems } = await loadAll([OWNER]);
  expect(problems).toEqual([]);
  const { results } = await runAll(scenarios, { parallel: 1, seed });
  return results[0]!;
}

describe('scenarios test real bot files', () => {
  it("{ file, as, vars } overrides the bot file's vars, and a var naming users.alice.pin_code is her PIN", async () => {
    const r = await runOwner();
    // the bot thanks alice (its owner by the scenario's vars) and refuses bob; the 9 is above the overridden cap 8
    expect(r.steps.map((s) => [s.id, s.status, s.error])).toEqual(
      Array.from({ length: 11 }, (_, i) => [String(i + 1), 'passed', undefined]),
    );
  }, 30_000);

  it('a seed repeats PINs, ids and keys across runs; another seed gives others', async () => {
    const a = await runOwner(7);
    const b = await runOwner(7);
    const c = await runOwner(8);
    expect(a.seed).toBe(7);
    expect(logs(a)).toEqual(logs(b));
    expect(logs(a)[0]).toMatch(/^pins [0-9A-Z]{6} [0-9A-Z]{6} usr_\w{21} [\w-]{32}$/);
    expect(logs(a)[1]).toMatch(/^tx txn_\w{21}$/);
    expect(logs(c)[0]).not.toEqual(logs(a)[0]);
    expect(logs(c)[1]).not.toEqual(logs(a)[1]);
  }, 60_000);

  it('a bot var naming a user the scenario does not have is a problem at the bot entry', async () => {
    const dir = mkdtempSync(join(FIXTURE, 'scenarios/tmp-'));
    const file = join(dir, 'bad.yaml');
    writeFileSync(
      file,
      `users: { alice: {}, jar: {} }\nbots:\n  - { file: ../../bots/owner-jar.yaml, ` +
        `as: jar, vars: { owner: "{{ users.alcie.pin_code }}" } }\nsteps: [{ log: hi ` +
        `}]\n`,
    );
    try {
      const { scenarios, problems } = await loadAll([file]);
      expect(scenarios).toEqual([]);
      expect(problems).toMatchObject([
        {
          file,
          line: 3,
          col: 5,
          message: expect.stringContaining('vars.owner names user "alcie", who is not a user of this scenario'),
          hint: expect.stringContaining('alice'),
        },
      ]);
    } finally {
      (await import('node:fs')).rmSync(dir, { recursive: true, force: true });
    }
  });
});
