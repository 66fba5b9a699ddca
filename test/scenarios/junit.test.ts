import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { junitReporter } from '../../src/scenario/reporters/junit.js';
import type { ScenarioResult } from '../../src/scenario/runner.js';
import { tempDir } from '../helpers/api.js';

const tmp = tempDir('pinbot-junit-');
afterAll(() => tmp.cleanup());

describe('the JUnit report', () => {
  it('gives each <testsuite> the wall-clock time it started (timestamp) and the hostname', async () => {
    const file = join(tmp.dir, 'r.xml');
    const result: ScenarioResult = {
      file: 'a.yaml',
      name: 'alice pays',
      tags: [],
      seed: 1,
      mode: 'embedded',
      status: 'passed',
      started: '2026-11-26T04:05:06.789Z',
      ms: 1500,
      clock: '2026-01-01T09:00:00.000Z',
      steps: [],
    };
    await junitReporter(file).finish([result], { total: 1, passed: 1, failed: 0, ms: 1500, parallel: 1 });
    const suite = /<testsuite [^>]*>/.exec(readFileSync(file, 'utf8'))![0];
    // the JUnit schema's timestamp has no time zone: the local time of the machine that ran it
    const local = new Date(result.started);
    const pad = (n: number) => String(n).padStart(2, '0');
    expect(suite).toContain(
      `timestamp="${local.getFullYear()}-${pad(local.getMonth() + 1)}-${pad(
        local.getDate(),
      )}T${pad(local.getHours())}:${pad(local.getMinutes())}:${pad(local.getSeconds())}"`,
    );
    expect(suite).toContain(`hostname="${hostname()}"`);
  });
});
