import { describe, expect, it } from 'vitest';
import { conditionContext, pollContext } from '../../src/plugin-api/context.js';
import type { PluginInstance } from '../../src/plugin-api/instance.js';

/** A call that never touches `ctx.state` must work where there is no store; touching it says why. */
describe('plugin call contexts without a store', () => {
  const inst = { name: 'p', config: {}, schedule: () => () => undefined } as unknown as PluginInstance;
  const signal = new AbortController().signal;

  it('a condition context is made, and only ctx.state fails, with the plugin named', () => {
    const rt = { scope: { bot: { name: 'b' }, event: {}, vars: {}, me: {}, now: '2026-01-01T00:00:00Z' }, api: {} };
    const ctx = conditionContext(inst, rt as never, signal);
    expect(ctx.bot).toBe('b');
    expect(() => ctx.state).toThrow('plugin p: state is not available here');
  });

  it('a poll context is made, and only ctx.state fails', () => {
    const rt = { bot: 'b', api: {}, me: {}, signal, clock: { now: () => 0 } };
    const ctx = pollContext(inst, rt as never);
    expect(ctx.now()).toBe(0);
    expect(() => ctx.state).toThrow('plugin p: state is not available here');
  });
});
