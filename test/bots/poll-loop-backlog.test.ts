import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock/clock.js';
import { PollLoop, type PollLoopOptions } from '../../src/runtime/bot/poll-loop.js';
import type { SourceDef } from '../../src/runtime/contract/types.js';

/** Resolves once `check` holds, looking every 5 ms for at most 5 s (no timing is asserted). */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
}

/** A poll loop over one source `s` (woken sources' interval: the safety poll, 10 minutes). */
function loop(source: SourceDef, paused: () => boolean) {
  const polled: unknown[] = [];
  const opts = {
    bot: { name: 'b', sources: ['s'], rules: [{ enabled: true, triggers: [{ def: { name: 'e' } }] }] },
    registry: { sources: new Map([['s', source]]) },
    state: { cursor: () => undefined, baseline: () => 0 },
    ctx: { clock: systemClock, signal: new AbortController().signal, log: pino({ level: 'silent' }) },
    timeoutMs: 10_000,
    intervalOf: () => 600_000,
    deferFirst: () => true,
    deliver: async (results: Array<{ events: unknown[] }>) => void polled.push(...results.flatMap((r) => r.events)),
    onError: () => undefined,
    paused,
    log: pino({ level: 'silent' }),
  } as unknown as PollLoopOptions;
  return { loop: new PollLoop(opts), polled };
}

describe('PollLoop', () => {
  it('a source woken while the backlog was full is polled once it drains, with no new change', async () => {
    let polls = 0;
    let full = true;
    const source: SourceDef = {
      name: 's',
      description: '',
      poll: async () => ({ events: [{ key: `k${++polls}`, type: 'e', payload: {} }], cursor: polls }),
    };
    const { loop: l, polled } = loop(source, () => full);
    l.start();
    l.wake(['s']);
    await new Promise((r) => setTimeout(r, 50));
    expect(polls).toBe(0);
    full = false; // the runs drained the backlog; nothing else happens
    await until(() => polled.length > 0);
    l.stop();
    expect(polls).toBe(1);
  });

  it('a source that says it has more is polled again at once, until it has not', async () => {
    let polls = 0;
    const source: SourceDef = {
      name: 's',
      description: '',
      poll: async () => ({ events: [{ key: `k${++polls}`, type: 'e', payload: {} }], cursor: polls, more: polls < 3 }),
    };
    const { loop: l, polled } = loop(source, () => false);
    l.start();
    l.wake(['s']);
    await until(() => polled.length >= 3);
    await l.whenIdle();
    l.stop();
    expect(polls).toBe(3);
  });
});
