import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../src/admin/commands.js';
import { configFrom } from '../../src/config/load.js';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { createUser } from '../../src/domain/users/users.js';
import { Accounts, balanceCents } from '../../src/domain/wallet/accounts.js';
import { Transactions } from '../../src/domain/wallet/transactions.js';
import { firstUbiDate, runUbi } from '../../src/domain/wallet/ubi.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { MemoryStore } from '../../src/store/core/memory-store.js';
import type { ReadView } from '../../src/store/core/types.js';
import { tempDir } from '../helpers/api.js';
import { assertConserved } from '../sim/ledger.js';

const T0 = Date.parse('2026-11-21T12:00:00Z');
const DAY = 86_400_000;

/** The UBI credits of a user, oldest first, as (date, created_at, cents). */
function credits(db: ReadView, userId: string) {
  return db
    .col(Transactions)
    .ids('user', userId)
    .map((id) => db.col(Transactions).get(id)!)
    .filter((t) => t.type === 'ubi')
    .map((t) => ({ date: t.ubi_date, at: new Date(t.created_at).toISOString(), cents: t.amount_cents, note: t.note }));
}

function memoryEnv(config: Record<string, unknown> = {}) {
  const clock = new VirtualClock(T0);
  return { store: new MemoryStore(), clock, env: { clock, config: configFrom(config) } };
}

describe('UBI rules', () => {
  it('pays from the first full UTC day', () => {
    expect(firstUbiDate(Date.parse('2026-11-21T12:00:00Z'))).toBe('2026-11-22');
    expect(firstUbiDate(Date.parse('2026-11-21T23:59:59.999Z'))).toBe('2026-11-22');
    expect(firstUbiDate(Date.parse('2026-11-22T00:00:00Z'))).toBe('2026-11-22');
    expect(firstUbiDate(Date.parse('2026-12-31T00:00:00.001Z'))).toBe('2027-01-01');
  });

  it('catches up every missed day once, and a second or concurrent run pays nothing', async () => {
    const { store, clock, env } = memoryEnv();
    const [a, b] = await store.transaction((tx) => [
      createUser(tx, env, { name: 'A' }),
      createUser(tx, env, { name: 'B' }),
    ]);
    expect(await runUbi(store, env)).toBe(0); // created today: nothing yet
    clock.set(Date.parse('2026-11-24T08:00:00Z'));
    expect(await runUbi(store, env)).toBe(6);
    expect(credits(store.read, a!.id).map((c) => c.date)).toEqual(['2026-11-22', '2026-11-23', '2026-11-24']);
    expect(credits(store.read, a!.id)[0]!.note).toBe('UBI for 2026-11-22');
    expect(balanceCents(store.read, b!.id)).toBe(300);
    expect(await runUbi(store, env)).toBe(0);
    expect(await Promise.all([runUbi(store, env), runUbi(store, env), runUbi(store, env)])).toEqual([0, 0, 0]);
    clock.set(Date.parse('2026-11-25T00:00:00Z'));
    const raced = await Promise.all([runUbi(store, env), runUbi(store, env), runUbi(store, env)]);
    expect(raced.reduce((x, y) => x + y, 0)).toBe(2);
    expect(balanceCents(store.read, a!.id)).toBe(400);
    expect(assertConserved(store.read)).toMatchObject({ ubi: 800, grants: 0, balances: 800 });
  });

  it('never pays a stored day again, even if the mark were lost', async () => {
    const { store, clock, env } = memoryEnv();
    const u = await store.transaction((tx) => createUser(tx, env, { name: 'A' }));
    clock.set(T0 + 2 * DAY);
    expect(await runUbi(store, env)).toBe(2);
    await store.transaction((tx) => tx.col(Accounts).update(u.id, { ubi_through: null }));
    clock.set(T0 + 3 * DAY);
    expect(await runUbi(store, env)).toBe(1);
    expect(credits(store.read, u.id).map((c) => c.date)).toEqual(['2026-11-22', '2026-11-23', '2026-11-24']);
    expect(balanceCents(store.read, u.id)).toBe(300);
  });

  it('pays ubi.amount_per_day in cents; 0 pays nothing and skips no later day', async () => {
    const paid = memoryEnv({ ubi: { amount_per_day: 2.5 } });
    const u = await paid.store.transaction((tx) => createUser(tx, paid.env, { name: 'A' }));
    paid.clock.set(T0 + DAY);
    await runUbi(paid.store, paid.env);
    expect(balanceCents(paid.store.read, u.id)).toBe(250);

    const zero = memoryEnv({ ubi: { amount_per_day: 0 } });
    const z = await zero.store.transaction((tx) => createUser(tx, zero.env, { name: 'Z' }));
    zero.clock.set(T0 + 2 * DAY);
    expect(await runUbi(zero.store, zero.env)).toBe(0);
    expect(zero.store.read.col(Accounts).get(z.id)).toMatchObject({ balance_cents: 0, ubi_through: '2026-11-23' });

    const bad = memoryEnv({ ubi: { amount_per_day: 0.005 } });
    await expect(runUbi(bad.store, bad.env)).rejects.toThrow(/ubi.amount_per_day/);
  });
});

describe('UBI in a server (catch-up on start, scheduler on the virtual clock)', () => {
  const log = pino({ level: 'silent' });
  const config = configFrom({ rate_limits: { enabled: false } });
  let server: RunningServer | undefined;
  let cleanup: (() => void) | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    cleanup?.();
  });

  it('advance 3d pays exactly three credits per user, each at its own midnight', async () => {
    const tmp = tempDir();
    cleanup = tmp.cleanup;
    server = await startServer({ dataDir: tmp.dir, config, port: 0, virtualClock: T0, bots: false, log });
    const ctx = { store: server.store, env: server.env, scheduler: server.scheduler };
    const alice = (await runAdminCommand(ctx, 'users.add', { name: 'Alice', balance: '10' })) as { id: string };
    const bob = (await runAdminCommand(ctx, 'users.add', { name: 'Bob' })) as { id: string };
    expect(await runAdminCommand(ctx, 'clock.advance', { duration: '3d' })).toEqual({
      now: '2026-11-24T12:00:00.000Z',
    });
    for (const u of [alice, bob]) {
      expect(credits(server.store.read, u.id)).toEqual(
        ['22', '23', '24'].map((d) => ({
          date: `2026-11-${d}`,
          at: `2026-11-${d}T00:00:00.000Z`,
          cents: 100,
          note: `UBI for 2026-11-${d}`,
        })),
      );
    }
    expect(balanceCents(server.store.read, alice.id)).toBe(1300);
    expect(assertConserved(server.store.read)).toMatchObject({ ubi: 600, grants: 1000 });
    // Moving back and forth again never pays a day twice.
    await runAdminCommand(ctx, 'clock.set', { iso: '2026-11-22T12:00:00Z' });
    await runAdminCommand(ctx, 'clock.advance', { duration: '2d' });
    expect(credits(server.store.read, bob.id)).toHaveLength(3);
    await runAdminCommand(ctx, 'clock.advance', { duration: '1d' });
    expect(credits(server.store.read, bob.id).map((c) => c.date)).toEqual([
      '2026-11-22',
      '2026-11-23',
      '2026-11-24',
      '2026-11-25',
    ]);
  });

  it('a server down for three days pays three credits per user on start', async () => {
    const tmp = tempDir();
    cleanup = tmp.cleanup;
    server = await startServer({ dataDir: tmp.dir, config, port: 0, virtualClock: T0, bots: false, log });
    const ctx = { store: server.store, env: server.env, scheduler: server.scheduler };
    const u = (await runAdminCommand(ctx, 'users.add', { name: 'Alice' })) as { id: string };
    await runAdminCommand(ctx, 'clock.advance', { duration: '1d' });
    expect(credits(server.store.read, u.id).map((c) => c.date)).toEqual(['2026-11-22']);
    await server.close();
    server = await startServer({ dataDir: tmp.dir, config, port: 0, virtualClock: T0 + 4 * DAY, bots: false, log });
    expect(credits(server.store.read, u.id).map((c) => [c.date, c.at])).toEqual([
      ['2026-11-22', '2026-11-22T00:00:00.000Z'],
      ['2026-11-23', '2026-11-25T12:00:00.000Z'],
      ['2026-11-24', '2026-11-25T12:00:00.000Z'],
      ['2026-11-25', '2026-11-25T12:00:00.000Z'],
    ]);
    // And a restart on the same day pays nothing more.
    await server.close();
    server = await startServer({
      dataDir: tmp.dir,
      config,
      port: 0,
      virtualClock: T0 + 4 * DAY + 3_600_000,
      bots: false,
      log,
    });
    expect(credits(server.store.read, u.id)).toHaveLength(4);
    expect(balanceCents(server.store.read, u.id)).toBe(400);
    assertConserved(server.store.read);
  });

  it('UBI credits are type "ubi" transactions in the API', async () => {
    const tmp = tempDir();
    cleanup = tmp.cleanup;
    server = await startServer({ dataDir: tmp.dir, config, port: 0, virtualClock: T0, bots: false, log });
    const ctx = { store: server.store, env: server.env, scheduler: server.scheduler };
    const u = (await runAdminCommand(ctx, 'users.add', { name: 'Alice' })) as { api_key: string; pin_code: string };
    await runAdminCommand(ctx, 'clock.advance', { duration: '2d' });
    const res = await fetch(`${server.url}/api/v1/wallet/transactions`, { headers: { 'X-API-Key': u.api_key } });
    const body = (await res.json()) as { transactions: Array<Record<string, unknown>> };
    expect(body.transactions).toEqual([
      expect.objectContaining({
        type: 'ubi',
        amount: 1,
        status: 'accepted',
        direction: 'received',
        note: 'UBI for 2026-11-23',
        sender: null,
        sender_pin: null,
        recipient_pin: u.pin_code,
        created_at: '2026-11-23T00:00:00.000Z',
      }),
      expect.objectContaining({ type: 'ubi', note: 'UBI for 2026-11-22', created_at: '2026-11-22T00:00:00.000Z' }),
    ]);
    const bal = (await (
      await fetch(`${server.url}/api/v1/wallet/balance`, { headers: { 'X-API-Key': u.api_key } })
    ).json()) as { balance: number };
    expect(bal.balance).toBe(2);
  });
});
