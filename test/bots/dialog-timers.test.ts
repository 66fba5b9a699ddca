import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { DialogTimers } from '../../src/runtime/run/dialog-timers.js';

// The deadlines of waiting dialogs: one clock timer for all of them (a waiting dialog costs a
// map entry, not a timer with its closures), each deadline firing once, at its own time.
describe('DialogTimers', () => {
  const start = Date.parse('2026-01-01T09:00:00Z');

  it('fires each deadline once at its time, in deadline order, whatever order they were set in', async () => {
    const clock = new VirtualClock(start);
    const fired: Array<[string, number]> = [];
    const t = new DialogTimers(clock, (id) => fired.push([id, clock.now() - start]));
    t.arm('c', start + 3000);
    t.arm('a', start + 1000);
    t.arm('b', start + 2000);
    t.arm('b2', start + 2000);
    expect(t.size).toBe(4);
    await clock.advance(1500);
    expect(fired).toEqual([['a', 1000]]);
    await clock.advance(5000);
    expect(fired).toEqual([
      ['a', 1000],
      ['b', 2000],
      ['b2', 2000],
      ['c', 3000],
    ]);
    expect(t.size).toBe(0);
    await clock.advance(60_000);
    expect(fired).toHaveLength(4);
  });

  it('a cancelled deadline never fires (also when it was the earliest); a re-armed one fires at its new time only', async () => {
    const clock = new VirtualClock(start);
    const fired: string[] = [];
    const t = new DialogTimers(clock, (id) => fired.push(`${id}@${clock.now() - start}`));
    t.arm('early', start + 1000);
    t.arm('late', start + 5000);
    t.arm('moved', start + 2000);
    t.cancel('early');
    t.arm('moved', start + 4000);
    t.arm('moved', start + 4000); // the same deadline again: kept, not doubled
    await clock.advance(10_000);
    expect(fired).toEqual(['moved@4000', 'late@5000']);
  });

  it('a deadline armed from inside a firing one is kept; clear drops every deadline', async () => {
    const clock = new VirtualClock(start);
    const fired: string[] = [];
    const t: DialogTimers = new DialogTimers(clock, (id) => {
      fired.push(id);
      if (id === 'first') t.arm('again', clock.now() + 1000);
    });
    t.arm('first', start + 1000);
    await clock.advance(3000);
    expect(fired).toEqual(['first', 'again']);
    t.arm('x', start + 10_000);
    t.clear();
    await clock.advance(20_000);
    expect(fired).toEqual(['first', 'again']);
    expect(t.size).toBe(0);
  });
});
