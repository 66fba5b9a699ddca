import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/domain/users/users.js';
import { Accounts } from '../../src/domain/wallet/accounts.js';
import { grantMoney } from '../../src/domain/wallet/grants.js';
import { configFrom } from '../../src/config/load.js';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { dataDirIntegrity } from '../../src/deployment/store-integrity.js';
import { DataFormatError, StoreDamagedError, StorageUnavailableError } from '../../src/store/core/errors.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { defineCollection } from '../../src/store/core/types.js';
import { testDatabase } from '../helpers/pg-db.js';

interface Counter {
  id: string;
  n: number;
  tag?: string;
  note?: string;
}
const Counters = defineCollection<Counter>({
  name: 'pg_counters',
  unique: { tag: (r) => r.tag },
  multi: { parity: (r) => (r.n % 2 ? 'odd' : 'even') },
});

describe('PgStore: the store on PostgreSQL', () => {
  const open: PgStore[] = [];
  const store = async (url: string, opts: Partial<Parameters<typeof PgStore.open>[0]> = {}) => {
    const s = await PgStore.open({ url, warn: () => undefined, ...opts });
    open.push(s);
    return s;
  };
  const sql = async (url: string, text: string, values: unknown[] = []) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return (await c.query(text, values)).rows;
    } finally {
      await c.end();
    }
  };
  afterAll(async () => {
    for (const s of open) await s.close().catch(() => undefined);
  });

  it('two processes: read-modify-write transactions racing from both are serialised (no lost update)', async () => {
    const url = await testDatabase();
    const a = await store(url);
    const b = await store(url);
    await a.transaction((tx) => tx.col(Counters).insert({ id: 'c', n: 0 }));
    const inc = (s: PgStore) =>
      s.transaction((tx) => tx.col(Counters).update('c', { n: tx.col(Counters).get('c')!.n + 1 }).n);
    const results = await Promise.all(Array.from({ length: 300 }, (_, i) => inc(i % 2 ? a : b)));
    // every increment saw the one before it: the results are 1..300, each once
    expect([...results].sort((x, y) => x - y)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    await a.durable();
    await b.durable();
    expect(a.read.col(Counters).get('c')!.n).toBe(300);
    expect(b.read.col(Counters).get('c')!.n).toBe(300);
    expect(a.seq).toBe(b.seq);
  });

  it('durable(): a read after a write acknowledged by another process sees it', async () => {
    const url = await testDatabase();
    const a = await store(url);
    const b = await store(url);
    for (let i = 0; i < 20; i++) {
      await a.transaction((tx) => tx.col(Counters).put({ id: 'x', n: i }));
      await b.durable();
      expect(b.read.col(Counters).get('x')!.n).toBe(i);
    }
  });

  it(
    'records come back exactly after a restart (key order, NUL, lone surrogates); index ' + 'keys are kept for SQL',
    async () => {
      const url = await testDatabase();
      const a = await store(url);
      const odd = { id: 'r1', note: 'a\u0000b\ud800c', n: 3, tag: 'é\u0000' };
      await a.transaction((tx) => tx.col(Counters).insert(odd));
      await a.close();
      const b = await store(url);
      expect(JSON.stringify(b.read.col(Counters).get('r1'))).toBe(JSON.stringify(odd));
      expect(b.read.col(Counters).one('tag', 'é\u0000')?.id).toBe('r1');
      expect(b.read.col(Counters).ids('parity', 'odd')).toEqual(['r1']);
      const rows = await sql(url, `SELECT id, keys FROM pinbot.pg_counters WHERE keys @> ARRAY['parity="odd"']`);
      expect(rows).toEqual([{ id: 'r1', keys: ['tag="é\\u0000"', 'parity="odd"'] }]);
    },
  );

  it(
    'a commit refused because another process committed first catches up from the ' +
      'refusal and runs again on the new state',
    async () => {
      const url = await testDatabase();
      const a = await store(url);
      const b = await store(url);
      await (a as unknown as { listener: { client: pg.Client } }).listener.client.query('UNLISTEN *');
      await b.transaction((tx) => tx.col(Counters).insert({ id: 'n1', n: 1, note: 'from b \u0000 \ud800' }));
      // a does not know n1 yet: its first run sees no record, the run after the refusal does
      const runs: boolean[] = [];
      const seen = await a.transaction((tx) => {
        runs.push(tx.col(Counters).get('n1') !== undefined);
        tx.col(Counters).put({ id: 'n2', n: 2 });
        return tx.col(Counters).get('n1')?.note;
      });
      expect(runs).toEqual([false, true]);
      expect(seen).toBe('from b \u0000 \ud800');
      await b.durable();
      expect(b.read.col(Counters).get('n2')?.n).toBe(2);
    },
  );

  it('a transaction that throws changes nothing; the others of its batch commit', async () => {
    const url = await testDatabase();
    const a = await store(url);
    const b = await store(url);
    await a.transaction((tx) => tx.col(Counters).insert({ id: 'u1', n: 0, tag: 'one' }));
    const results = await Promise.allSettled([
      a.transaction((tx) => tx.col(Counters).insert({ id: 'u2', n: 1 })),
      a.transaction((tx) => {
        tx.col(Counters).insert({ id: 'u3', n: 2 });
        tx.col(Counters).insert({ id: 'u4', n: 2, tag: 'one' }); // unique key taken: all of it is undone
      }),
      a.transaction((tx) => tx.col(Counters).insert({ id: 'u5\u0000', n: 1 })), // an id PostgreSQL cannot hold
      a.transaction((tx) => tx.col(Counters).insert({ id: 'u6', n: 1 })),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect(String((results[2] as PromiseRejectedResult).reason)).toMatch(/cannot be stored/);
    await b.durable();
    for (const s of [a, b]) expect([...s.read.col(Counters).all()].map((r) => r.id).sort()).toEqual(['u1', 'u2', 'u6']);
    expect((await sql(url, 'SELECT id FROM pinbot.pg_counters ORDER BY id')).map((r) => r.id)).toEqual([
      'u1',
      'u2',
      'u6',
    ]);
  });

  it('a process the trimmed log no longer reaches reloads the tables (deletes included)', async () => {
    const url = await testDatabase();
    const a = await store(url);
    await a.transaction((tx) => ['d1', 'd2', 'd3'].forEach((id) => tx.col(Counters).insert({ id, n: 1 })));
    const b = await store(url);
    // b stops listening (as if its notification connection were down), a writes, the log is cut
    await (b as unknown as { listener: { client: pg.Client } }).listener.client.query('UNLISTEN *');
    await a.transaction((tx) => tx.col(Counters).delete('d2'));
    await a.transaction((tx) => tx.col(Counters).update('d3', { n: 7 }));
    await a.transaction((tx) => tx.col(Counters).insert({ id: 'd4', n: 2 }));
    await sql(url, 'DELETE FROM pinbot._log');
    await b.durable();
    expect([...b.read.col(Counters).all()].map((r) => [r.id, r.n]).sort()).toEqual([
      ['d1', 1],
      ['d3', 7],
      ['d4', 2],
    ]);
    expect(b.read.col(Counters).ids('parity', 'even')).toEqual(['d4']);
    expect(b.seq).toBe(a.seq);
  });

  it(
    'a schema written by a newer pinbot (a higher table version) is refused in one ' + 'line, and left as it is',
    async () => {
      const url = await testDatabase();
      await (await store(url)).close();
      await sql(url, 'UPDATE pinbot._head SET schema_version = 7 WHERE id = 1');
      const err = (await PgStore.open({ url, warn: () => undefined }).catch((e: unknown) => e)) as Error;
      expect(err).toBeInstanceOf(DataFormatError);
      expect(err.message).toBe(
        'the PostgreSQL schema "pinbot" holds pinbot table version 7, written by a ' +
          'newer pinbot; this one reads version 1. Install the newer pinbot again on ' +
          'every process, or point store.schema at a schema this version wrote',
      );
      expect(await sql(url, 'SELECT schema_version FROM pinbot._head')).toEqual([{ schema_version: 7 }]);
    },
  );

  it('start-up checks: money that does not add up in the tables refuses the start, naming the record', async () => {
    const url = await testDatabase();
    const env = { clock: new VirtualClock(Date.parse('2026-11-21T12:00:00Z')), config: configFrom({}) };
    const a = await store(url, { integrity: dataDirIntegrity });
    const user = await a.transaction((tx) => {
      const u = createUser(tx, env, { name: 'Ann' });
      grantMoney(tx, env, u.id, 500);
      return u;
    });
    await a.close();
    await sql(
      url,
      `UPDATE pinbot.${Accounts.name} SET record = json_build_object('id', id, ` +
        `'balance_cents', 900, 'ubi_through', null) WHERE id = $1`,
      [user.id],
    );
    await expect(PgStore.open({ url, integrity: dataDirIntegrity })).rejects.toThrow(StoreDamagedError);
    await expect(PgStore.open({ url, integrity: dataDirIntegrity })).rejects.toThrow(
      /money does not add up: balances 900/,
    );
  });

  it('a connection cut while checked out is a warning, not an uncaught error', async () => {
    const url = await testDatabase();
    const warnings: string[] = [];
    const a = await store(url, { warn: (m) => void warnings.push(m) });
    // a transaction holds its client between queries: that is when a cut reaches the client, not the pool
    const held = await (a as unknown as { pool: pg.Pool }).pool.connect();
    await sql(
      url,
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ` +
        `current_database() AND pid <> pg_backend_pid()`,
    );
    for (let t = 0; t < 200 && !warnings.some((w) => /connection failed/.test(w)); t++)
      await new Promise((r) => setTimeout(r, 25));
    held.release(true);
    expect(warnings.some((w) => /a PostgreSQL connection failed/.test(w))).toBe(true);
  });

  it(
    'connections cut mid-load: every acknowledged transaction is stored, every refused ' +
      'one is not, and writes resume',
    async () => {
      const url = await testDatabase();
      const a = await store(url, { retry: { firstMs: 20, maxMs: 100 } });
      const acked = new Set<string>();
      const refused = new Set<string>();
      const writes: Array<Promise<void>> = [];
      for (let i = 0; i < 400; i++) {
        const id = `w${i}`;
        writes.push(
          a
            .transaction((tx) => void tx.col(Counters).insert({ id, n: i }))
            .then(
              () => void acked.add(id),
              (err) => {
                expect(err).toBeInstanceOf(StorageUnavailableError);
                refused.add(id);
              },
            ),
        );
        if (i === 150)
          await sql(
            url,
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ` +
              `current_database() AND pid <> pg_backend_pid()`,
          );
        if (i % 50 === 0) await new Promise((r) => setTimeout(r, 5));
      }
      await Promise.all(writes);
      expect(acked.size + refused.size).toBe(400);
      expect(acked.size).toBeGreaterThan(0);
      const stored = new Set((await sql(url, 'SELECT id FROM pinbot.pg_counters')).map((r) => r.id as string));
      for (const id of acked) expect(stored.has(id)).toBe(true);
      for (const id of refused) expect(stored.has(id)).toBe(false);
      // the store takes writes again by itself, and its memory is the database's
      let ok = false;
      for (let t = 0; t < 100 && !ok; t++) {
        ok = await a
          .transaction((tx) => void tx.col(Counters).put({ id: 'after', n: 1 }))
          .then(
            () => true,
            async () => (await new Promise((r) => setTimeout(r, 50)), false),
          );
      }
      expect(ok).toBe(true);
      await a.durable();
      expect([...a.read.col(Counters).all()].length).toBe(stored.size + 1);
    },
  );
});
