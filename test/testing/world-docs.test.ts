import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTestWorld } from 'pinbot/testing';
import { ROOT } from '../helpers/spawn.js';

/**
 * The test kit's table in docs/plugins.md says which calls are promises (`await world.x(…)`):
 * a test that forgets an `await` compares a Promise and fails confusingly, or passes by
 * mistake. Each call that reads is made here and its answer compared with the docs.
 */
describe('the test kit reference (docs/plugins.md)', () => {
  it('marks exactly the calls that return a promise with await', async () => {
    const docs = readFileSync(join(ROOT, 'docs/plugins.md'), 'utf8');
    const table = docs.slice(docs.indexOf('## The test kit'), docs.indexOf('## Performance'));
    const world = await createTestWorld({ users: { alice: {} } });
    try {
      const calls: Record<string, () => unknown> = {
        inbox: () => world.inbox('alice'),
        transfers: () => world.transfers('alice'),
        traces: () => world.traces('nobody'),
        plugins: () => world.plugins(),
        state: () => world.state('karma'),
        fetch: () => world.fetch('/healthz'),
        settle: () => world.settle(),
      };
      for (const [name, call] of Object.entries(calls)) {
        const answer = call();
        const isPromise = answer instanceof Promise;
        await answer;
        expect(table, `world.${name}`).toContain(`world.${name}(`);
        expect(
          table.includes(`await world.${name}(`),
          `world.${name} ${isPromise ? 'returns a promise' : 'is synchronous'}`,
        ).toBe(isPromise);
      }
    } finally {
      await world.close();
    }
  });
});
