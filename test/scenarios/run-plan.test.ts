import { describe, expect, it } from 'vitest';
import { IN_PROCESS_UP_TO, runPlan } from '../../src/scenario/run-plan.js';

describe('how a scenario run goes without --parallel: by the number of files', () => {
  it.each([
    ['a small suite runs in this process, one at a time', 3, {}, { parallel: 1, inProcess: true }],
    ['up to the threshold too', IN_PROCESS_UP_TO, {}, { parallel: 1, inProcess: true }],
    ['a larger one in one worker process per core', IN_PROCESS_UP_TO + 1, {}, { parallel: 4, inProcess: false }],
    ['an explicit --parallel N is obeyed (workers)', 3, { parallel: 2 }, { parallel: 2, inProcess: false }],
    ['--parallel 1 is in this process', 40, { parallel: 1 }, { parallel: 1, inProcess: true }],
    ['--in-process: concurrently in this process', 40, { inProcess: true }, { parallel: 4, inProcess: true }],
  ])('%s', (_what, count, o, plan) => {
    expect(runPlan(count, { cores: 4, ...o })).toEqual(plan);
  });
});
