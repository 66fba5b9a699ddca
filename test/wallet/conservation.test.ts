import { describe, expect, it } from 'vitest';
import { configFrom } from '../../src/config/load.js';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { createUser } from '../../src/domain/users/users.js';
import { Accounts } from '../../src/domain/wallet/accounts.js';
import { grantMoney } from '../../src/domain/wallet/grants.js';
import { MemoryStore } from '../../src/store/core/memory-store.js';
import { assertConserved } from '../sim/ledger.js';
import { simulate } from '../sim/workload.js';

// The same workload as `npm run sim -- --seeds 1000`, for a few seeds on every `npm test`.
describe('conservation: balances + pending = UBI + grants under a random concurrent workload', () => {
  it.each([1, 2])('seed %i, memory store: 2,000 operations, 32 in flight', { timeout: 120_000 }, async (seed) => {
    const report = await simulate({ seed, ops: 2000, concurrency: 32 });
    expect(report.ledger.balances + report.ledger.pending).toBe(report.ledger.ubi + report.ledger.grants);
    // The workload really exercised what it claims to.
    const seen = (prefix: string) =>
      Object.entries(report.outcomes)
        .filter(([k]) => k.startsWith(prefix))
        .reduce((s, [, n]) => s + n, 0);
    expect(seen('send 201')).toBeGreaterThan(300);
    expect(seen('overdraw 400 insufficient_funds')).toBeGreaterThan(20);
    expect(seen('race accept 200') + seen('race decline 200')).toBeGreaterThan(20);
    expect(seen('race accept 200')).toBeGreaterThan(0);
    expect(seen('race decline 200')).toBeGreaterThan(0);
    expect(seen('retry')).toBeGreaterThan(20);
    expect(seen('sender 403')).toBeGreaterThan(0);
    expect(seen('stranger 404')).toBeGreaterThan(0);
    expect(report.ledger.ubi).toBeGreaterThan(0);
  });

  it('seed 3, journaled file store (fsync, group commit)', { timeout: 120_000 }, async () => {
    const report = await simulate({ seed: 3, ops: 2000, concurrency: 32, store: 'file' });
    expect(report.ledger.balances + report.ledger.pending).toBe(report.ledger.ubi + report.ledger.grants);
  });

  it('the checker notices books that do not balance', async () => {
    const store = new MemoryStore();
    const env = { clock: new VirtualClock(0), config: configFrom({}) };
    const u = await store.transaction((tx) => {
      const user = createUser(tx, env, { name: 'A' });
      grantMoney(tx, env, user.id, 500);
      return user;
    });
    expect(assertConserved(store.read)).toEqual({ balances: 500, pending: 0, ubi: 0, grants: 500 });
    await store.transaction((tx) => tx.col(Accounts).update(u.id, { balance_cents: 501 }));
    expect(() => assertConserved(store.read)).toThrow(/conservation broken/);
  });
});
