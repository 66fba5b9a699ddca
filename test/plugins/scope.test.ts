import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { pluginScope } from '../../src/plugin-api/boundary.js';
import { StepTimeoutError, waitingOffTheClock, withStepTimeout } from '../../src/util/step-timeout.js';

// The plugin scope and the step watchdog share one AsyncLocalStorage (util/step-timeout.ts):
// each is carried through timers and promises, and entering one keeps the other.
describe('plugin scope and step watchdog', () => {
  it("carries the plugin through the plugin's own timers, immediates and promises", async () => {
    const seen = await pluginScope.run('karma', async () => {
      await sleep(1);
      const fromTimer = await new Promise<string | undefined>((r) => setTimeout(() => r(pluginScope.getStore()), 1));
      const fromImmediate = await new Promise<string | undefined>((r) => setImmediate(() => r(pluginScope.getStore())));
      return [pluginScope.getStore(), fromTimer, fromImmediate];
    });
    expect(seen).toEqual(['karma', 'karma', 'karma']);
    expect(pluginScope.getStore()).toBeUndefined();
  });

  it('exit leaves the plugin; a nested plugin is the inner one', async () => {
    await pluginScope.run('a', async () => {
      expect(pluginScope.exit(() => pluginScope.getStore())).toBeUndefined();
      expect(await pluginScope.run('b', async () => (await sleep(1), pluginScope.getStore()))).toBe('b');
      expect(pluginScope.getStore()).toBe('a');
    });
  });

  it("a step's timeout keeps the plugin it runs in", async () => {
    const inner = await pluginScope.run('faq', () =>
      withStepTimeout('x', 5_000, async () => (await sleep(1), pluginScope.getStore())),
    );
    expect(inner).toBe('faq');
  });

  it("the watchdog goes on through a plugin's scope and its exit: a wait off the clock pauses it", async () => {
    // 50 ms of working time; the 120 ms waits are off the clock, inside the plugin and outside it
    await expect(
      withStepTimeout('plugin call', 50, () =>
        pluginScope.run('p', async () => {
          await waitingOffTheClock(() => sleep(120));
          await pluginScope.exit(() => waitingOffTheClock(() => sleep(120)));
          return 'done';
        }),
      ),
    ).resolves.toBe('done');
    // the same wait on the clock times out (the test can fail)
    await expect(
      withStepTimeout('plugin call', 50, () => pluginScope.run('p', () => sleep(120))),
    ).rejects.toBeInstanceOf(StepTimeoutError);
  });
});
