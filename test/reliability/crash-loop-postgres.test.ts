import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../src/admin/commands.js';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { configFrom } from '../../src/config/load.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { testDatabase } from '../helpers/pg-db.js';
import { checkDatabase } from './crash-db.js';
import { runCrashLoop } from './crash-loop.js';

/** Runs `sql` on the database at `url`. */
async function sql(url: string | undefined, text: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}

describe('crash loop on the PostgreSQL store: SIGKILL serve processes sharing one database, restart, verify', () => {
  it('two processes, 6 kills: every acknowledged write survives, every start loads, ' +
    'retries happen once, money adds up in the API and in a fresh load', async () => {
    const f = await runCrashLoop({
      kills: 6,
      seed: 20261121,
      burstMs: [50, 300],
      earlyKillShare: 0.2,
      cliEvery: 3,
      database: await testDatabase(),
      processes: 2,
    });
    const figures = {
      kills: f.kills,
      lost: f.lost,
      serverErrors: f.serverErrors,
      unloadableStarts: f.unloadableStarts,
      duplicates: f.duplicates,
      invariantViolations: f.invariantViolations,
      databaseProblems: f.databaseProblems,
      keysInLogs: f.keysInLogs,
    };
    expect(figures, f.samples.join('\n')).toEqual({
      kills: 6,
      lost: 0,
      serverErrors: 0,
      unloadableStarts: 0,
      duplicates: 0,
      invariantViolations: 0,
      databaseProblems: 0,
      keysInLogs: 0,
    });
    expect(f.acknowledged).toBeGreaterThan(30);
    expect(f.byKind['user (CLI)']).toBeGreaterThan(0);
    expect(f.databaseChecks).toBeGreaterThan(3);
    expect(f.invariantChecks).toBeGreaterThan(3);
  }, 240_000);

  // The harness can fail on PostgreSQL too: the database is damaged after the kill.
  const addBalance =
    `UPDATE pinbot.wallet_accounts SET record = (record::jsonb || ` +
    `jsonb_build_object('balance_cents', (record->>'balance_cents')::bigint + ` +
    `500))::json`;

  it('the fresh load of the database reports books that do not balance', async () => {
    const url = await testDatabase();
    const store = await PgStore.open({ url, warn: () => undefined });
    await runAdminCommand(
      { store, env: { clock: new VirtualClock(Date.now()), config: configFrom({}) } },
      'users.add',
      { name: 'ana', balance: '25' },
    );
    await store.close();
    expect(await checkDatabase(url)).toEqual({ transactions: 1 });
    await sql(url, addBalance);
    expect((await checkDatabase(url)).problem).toMatch(
      /money does not add up: balances 3000 \+ pending 0 ≠ UBI \+ grants 2500/,
    );
  });

  const sabotaged = { kills: 1, seed: 9, earlyKillShare: 0, cliEvery: 0, cleanStop: false };

  it('counts acknowledged writes a database that lost rows after the kill no longer has', async () => {
    const f = await runCrashLoop({
      ...sabotaged,
      database: await testDatabase(),
      killAfterAcks: 1,
      sabotage: (_dir, db) => sql(db, 'DELETE FROM pinbot.api_keys'),
    });
    expect(f.lost).toBeGreaterThan(0);
    expect(f.samples.some((s) => /user \S+: acknowledged as present, found missing \(401\)/.test(s))).toBe(true);
  }, 120_000);

  it('a database whose balances were edited after the kill is refused at start-up: the damage noticed', async () => {
    const f = await runCrashLoop({
      ...sabotaged,
      database: await testDatabase(),
      killAfterAcks: 3,
      // a grant opens the account whose balance the sabotage edits
      killWhen: (byKind) => (byKind['grant (admin socket)'] ?? 0) > 0,
      sabotage: (_dir, db) => sql(db, addBalance),
    });
    expect(f.damageRefused).toBe(1);
    expect(f.unloadableStarts).toBe(0);
    expect(f.samples.join('\n')).toMatch(/refused start after sabotage: pinbot: .*money does not add up/);
  }, 120_000);
});
