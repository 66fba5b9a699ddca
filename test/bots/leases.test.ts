import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { BotLeases, BotLeasing, BotWorkers, LeaseLostError } from '../../src/deployment/bot-leases.js';
import { MemoryStore } from '../../src/store/core/memory-store.js';
import { defineCollection } from '../../src/store/core/types.js';

const log = pino({ level: 'silent' });
const TTL = 3_000;
const Notes = defineCollection<{ id: string; by: string }>({ name: 'lease_test_notes' });

/**
 * Several "processes" (BotLeasing instances) on one shared store and one virtual clock. Each
 * records which bots it runs; the test checks no bot ever runs in two at once.
 */
function cluster(store = new MemoryStore(), clock = new VirtualClock(Date.UTC(2026, 0, 1))) {
  const running = new Map<string, string>(); // bot → process label
  const violations: string[] = [];
  const procs = new Map<string, BotLeasing>();
  const add = async (label: string, bots: string[]) => {
    const p = new BotLeasing({ store, clock, log, ttlMs: TTL, label });
    procs.set(label, p);
    p.offer(bots);
    await p.attach({
      run: (name) => {
        const other = running.get(name);
        if (other && other !== label) violations.push(`${name} started in ${label} while running in ${other}`);
        running.set(name, label);
      },
      halt: async (name) => {
        if (running.get(name) === label) running.delete(name);
      },
    });
    return p;
  };
  /** What a SIGKILL does: renewals stop, nothing is handed back. */
  const kill = (label: string) => {
    const p = procs.get(label)! as unknown as { stopped: boolean; cancel?: () => void };
    p.stopped = true;
    p.cancel?.();
    for (const [bot, by] of running) if (by === label) running.delete(bot);
  };
  const count = (label: string) => [...running.values()].filter((l) => l === label).length;
  return { store, clock, running, violations, procs, add, kill, count };
}

const names = (n: number) => Array.from({ length: n }, (_, i) => `bot-${i}`);

describe('bot leases between processes', () => {
  it('a lone process runs every bot; a second one gets its fair share; no bot ever runs twice', async () => {
    const c = cluster();
    await c.add('a', names(6));
    expect(c.count('a')).toBe(6);
    await c.add('b', names(6));
    await c.clock.advance(TTL * 2);
    expect(c.count('a')).toBe(3);
    expect(c.count('b')).toBe(3);
    await c.add('c', names(6));
    await c.clock.advance(TTL * 2);
    expect([c.count('a'), c.count('b'), c.count('c')]).toEqual([2, 2, 2]);
    expect(c.violations).toEqual([]);
    expect(c.store.read.col(BotLeases).count()).toBe(6);
  });

  it('a killed process: after the ttl its bots are taken over by the others, and its fenced writes fail', async () => {
    const c = cluster();
    const a = await c.add('a', names(4));
    await c.add('b', names(4));
    await c.clock.advance(TTL * 2);
    const aBots = [...c.running].filter(([, l]) => l === 'a').map(([b]) => b);
    expect(aBots).toHaveLength(2);
    c.kill('a');
    await c.clock.advance(TTL - 1_100);
    expect(c.count('b')).toBe(2); // not before the ttl: a might only be slow
    await c.clock.advance(TTL);
    expect(c.count('b')).toBe(4);
    expect(c.store.read.col(BotWorkers).count()).toBe(1);
    // a write of the dead process on one of its old bots is refused, and changes nothing
    await expect(
      c.store.transaction((tx) => (a.fence(aBots[0]!)(tx), tx.col(Notes).put({ id: 'x', by: 'a' }))),
    ).rejects.toThrow(LeaseLostError);
    expect(c.store.read.col(Notes).get('x')).toBeUndefined();
    const b = c.procs.get('b')!;
    await c.store.transaction((tx) => (b.fence(aBots[0]!)(tx), tx.col(Notes).put({ id: 'x', by: 'b' })));
    expect(c.violations).toEqual([]);
  });

  it('a process that stalled past the ttl finds itself taken for dead: it stops its bots and joins again', async () => {
    const c = cluster();
    const a = await c.add('a', names(2));
    await c.add('b', names(2));
    await c.clock.advance(TTL * 2);
    const before = a.worker;
    // a stalls: its renewals stop (but it keeps believing it runs its bots)
    const stalled = a as unknown as { stopped: boolean; cancel?: () => void; schedule(): void };
    stalled.stopped = true;
    stalled.cancel?.();
    await c.clock.advance(TTL * 2);
    expect(c.count('b')).toBe(2 + c.count('a')); // b also runs a's bots now…
    // …and a comes back: its next renewal finds its record gone
    stalled.stopped = false;
    stalled.schedule();
    await c.clock.advance(TTL);
    expect(a.worker).not.toBe(before);
    expect(a.owns('bot-0') && c.running.get('bot-0') === 'b').toBe(false);
    await c.clock.advance(TTL * 3);
    expect(c.count('a') + c.count('b')).toBe(2);
    expect(c.count('a')).toBe(1);
  });

  it('a process that stops hands its bots back at once (no ttl to wait)', async () => {
    const c = cluster();
    const a = await c.add('a', names(4));
    await c.add('b', names(4));
    await c.clock.advance(TTL * 2);
    await a.stop();
    expect(c.store.read.col(BotWorkers).count()).toBe(1);
    await c.clock.advance(TTL / 3 + 10);
    expect(c.count('b')).toBe(4);
    expect(c.violations).toEqual([]);
  });

  it('a bot only one process can run is run there, whatever the fair share', async () => {
    const c = cluster();
    await c.add('a', ['shared-1', 'shared-2', 'only-a']);
    await c.add('b', ['shared-1', 'shared-2']);
    await c.clock.advance(TTL * 3);
    expect(c.running.get('only-a')).toBe('a');
    expect(c.running.size).toBe(3);
    expect(c.violations).toEqual([]);
  });
});
