import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { createTestWorld } from '../../src/testing/world.js';

describe('VirtualClock.onTouch', () => {
  it('tells its listeners of every touch until they stop listening', () => {
    const clock = new VirtualClock(0);
    let a = 0;
    let b = 0;
    const stopA = clock.onTouch(() => a++);
    clock.onTouch(() => b++);
    clock.touch();
    stopA();
    clock.touch();
    expect([a, b]).toEqual([1, 2]);
  });

  it('hears the commits of an embedded server (what a scenario counts)', async () => {
    const world = await createTestWorld({
      start: Date.parse('2026-11-21T12:00:00Z'),
      services: false,
      users: { alice: { balance: 10 }, bob: {} },
    });
    try {
      let commits = 0;
      world.clock.onTouch(() => commits++);
      await world.users.alice!.api.wallet.send({ recipient_pin: world.users.bob!.pin_code, amount: 1 });
      expect(commits).toBeGreaterThan(0);
    } finally {
      await world.close();
    }
  });
});
