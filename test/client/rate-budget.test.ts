import { describe, expect, it } from 'vitest';
import { createRateBudget } from '../../src/client/rate-budget.js';

/** A budget on a fake clock: sleeping moves the clock. */
function fakeBudget(share = 0.5) {
  let t = 0;
  const waits: number[] = [];
  const budget = createRateBudget({
    share,
    now: () => t,
    sleep: async (ms) => {
      waits.push(ms);
      t += ms;
    },
  });
  const headers = (remaining: number, reset: number, limit = 100) =>
    new Headers({
      RateLimit: `"general"; r=${remaining}; t=${reset}`,
      'RateLimit-Policy': `"general"; q=${limit}; w=60`,
    });
  return { budget, waits, headers, now: () => t, advance: (ms: number) => (t += ms) };
}

describe('rate budget', () => {
  it('lets requests through while nothing is known', async () => {
    const f = fakeBudget();
    for (let i = 0; i < 5; i++) await f.budget.run({ kind: 'poll', buckets: ['general'] }, async () => i);
    expect(f.waits).toEqual([]);
  });

  it('stops polls at their share but keeps the rest for actions', async () => {
    const f = fakeBudget(0.5);
    f.budget.observe(f.headers(50, 30)); // half the window gone, 50 used: the poll share is spent
    await f.budget.run({ kind: 'action', buckets: ['general'] }, async () => 1);
    expect(f.waits).toEqual([]);
    await f.budget.run({ kind: 'poll', buckets: ['general'] }, async () => 1);
    expect(f.waits).toEqual([30_000]); // until the window resets
  });

  it('holds actions too once the bucket is empty', async () => {
    const f = fakeBudget();
    f.budget.observe(f.headers(0, 12));
    await f.budget.run({ kind: 'action', buckets: ['general'] }, async () => 1);
    expect(f.waits).toEqual([12_000]);
  });

  it('paces polls over the window instead of spending the share at once', async () => {
    const f = fakeBudget(0.5);
    f.budget.observe(f.headers(100, 60));
    for (let i = 0; i < 50; i++) await f.budget.run({ kind: 'poll', buckets: ['general'] }, async () => i);
    // a burst of 10 goes at once; the other 40 are spread over the minute
    expect(f.now()).toBeGreaterThan(40_000);
    expect(f.now()).toBeLessThanOrEqual(60_000);
    expect(f.waits.length).toBeGreaterThan(30);
  });

  it('block() holds every request on the bucket until the time has passed', async () => {
    const f = fakeBudget();
    f.budget.block(['messages'], 5000);
    await f.budget.run({ kind: 'action', buckets: ['general', 'messages'] }, async () => 1);
    expect(f.waits).toEqual([5000]);
  });
});

describe('rate budget shared by several bots of one user', () => {
  it('when polls wait for room, the bot that polled least goes first', async () => {
    const { VirtualClock } = await import('../../src/clock/virtual-clock.js');
    const clock = new VirtualClock(0);
    const budget = createRateBudget({
      share: 0.5,
      now: () => clock.now(),
      sleep: (ms, signal) => clock.sleep(ms, signal),
    });
    budget.observe(new Headers({ RateLimit: '"general"; r=100; t=60', 'RateLimit-Policy': '"general"; q=100; w=60' }));
    const order: string[] = [];
    const poll = (owner: string) =>
      budget.run({ kind: 'poll', buckets: ['general'], owner }, async () => void order.push(owner));
    // a bot with many sources asks for 30 polls, then a bot with one source for 3
    const busy = Array.from({ length: 30 }, () => poll('busy'));
    const quiet = Array.from({ length: 3 }, () => poll('quiet'));
    await clock.advance(60_000);
    await Promise.all([...busy, ...quiet]);
    // the burst (10) goes to the first asker; then the quiet bot's 3 go before the busy bot's rest
    expect(order.slice(0, 13)).toEqual([...Array(10).fill('busy'), 'quiet', 'quiet', 'quiet']);
  });
});

describe('rate budget with conditional polls and actions', () => {
  it(
    'actions do not eat the polls share; once the server gives 304s back, polls are ' +
      'held to their share but not spread',
    async () => {
      const f = fakeBudget(0.5);
      f.budget.observe(f.headers(100, 60));
      for (let i = 0; i < 40; i++) await f.budget.run({ kind: 'action', buckets: ['general'] }, async () => i);
      f.budget.observe(f.headers(60, 59)); // the server counted the 40 actions
      await f.budget.run({ kind: 'poll', buckets: ['general'] }, async () => 1);
      expect(f.waits).toEqual([]); // the polls' half is untouched
      // a server whose 304s cost nothing: polls go at once up to their share…
      f.budget.observe(
        new Headers({ RateLimit: '"general"; r=59; t=59', 'RateLimit-Policy': '"general"; q=100; w=60' }),
        { notModified: true },
      );
      for (let i = 0; i < 49; i++) await f.budget.run({ kind: 'poll', buckets: ['general'] }, async () => i);
      expect(f.waits).toEqual([]);
      // …and no further (50 polls counted beside the 40 actions: the rest is the actions')
      await f.budget.run({ kind: 'poll', buckets: ['general'] }, async () => 1);
      expect(f.waits).toHaveLength(1);
    },
  );
});
