import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../src/admin/commands.js';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { configFrom } from '../../src/config/load.js';
import { Accounts } from '../../src/domain/wallet/accounts.js';
import { Transactions } from '../../src/domain/wallet/transactions.js';
import { dataDirIntegrity } from '../../src/deployment/store-integrity.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { tempDir } from '../helpers/api.js';
import { testDatabase } from '../helpers/pg-db.js';
import { killAll, spawnServe, type ServeChild } from '../helpers/serve-child.js';
import { assertConserved } from '../sim/ledger.js';
import { jsonClient, type Reply } from '../sim/client.js';
import { simulate } from '../sim/workload.js';

/**
 * Three `pinbot serve` processes on one PostgreSQL database, clients spread across them — the
 * deployment of docs/scaling.md. The servers run with --no-bots (bot-takeover.test.ts has the
 * bots) and --virtual-clock (their UBI and cron jobs stay still; this process pays
 * the simulator's UBI days through its own store on the same database).
 */
describe('three serve processes on one database', () => {
  let servers: ServeChild[] = [];
  let observer: PgStore | undefined;
  let urls: string[] = [];
  const tmp = tempDir('pinbot-cluster-');
  // One deployment for both tests (starting three processes is the slow part).
  beforeAll(async () => {
    const url = await testDatabase();
    const config = join(tmp.dir, 'config.yaml');
    writeFileSync(
      config,
      'store:\n  driver: postgres\n  url: ${env:DATABASE_URL}\nrate_limits:\n  enabled: false\nlog:\n  level: info\n',
    );
    // store.url comes from DATABASE_URL, as an operator would set it
    servers = await Promise.all(
      [1, 2, 3].map((i) =>
        spawnServe(['--data', join(tmp.dir, `data${i}`), '--config', config, '--no-bots', '--virtual-clock'], {
          DATABASE_URL: url,
        }),
      ),
    );
    urls = servers.map((s) => s.url);
    observer = await PgStore.open({ url, integrity: dataDirIntegrity, warn: () => undefined });
  });
  afterAll(async () => {
    await killAll(servers);
    await observer?.close();
    tmp.cleanup();
  });

  it('the money simulator on one process with the PostgreSQL store: 0 violations', { timeout: 120_000 }, async () => {
    const report = await simulate({
      seed: 12,
      ops: 800,
      concurrency: 24,
      store: 'postgres',
      url: await testDatabase(),
    });
    expect(report.ledger.balances + report.ledger.pending).toBe(report.ledger.ubi + report.ledger.grants);
    expect(Object.keys(report.outcomes).some((k) => k.startsWith('race'))).toBe(true);
  });

  it('the money simulator, requests spread over the three (sends, accept racing decline, ' +
    'idempotent retries): 0 violations', {
    timeout: 120_000,
  }, async () => {
    const report = await simulate({ seed: 11, ops: 1200, concurrency: 24, cluster: { urls, store: observer! } });
    expect(report.ledger.balances + report.ledger.pending).toBe(report.ledger.ubi + report.ledger.grants);
    const seen = (prefix: string) =>
      Object.entries(report.outcomes)
        .filter(([k]) => k.startsWith(prefix))
        .reduce((s, [, n]) => s + n, 0);
    expect(seen('send 201')).toBeGreaterThan(150);
    expect(seen('race accept 200') + seen('race decline 200')).toBeGreaterThan(10);
    expect(seen('retry')).toBeGreaterThan(10);
    expect(report.ledger.ubi).toBeGreaterThan(0);
  });

  it('kill -9 of one process mid-load loses no acknowledged write; retries through the others take effect once', {
    timeout: 120_000,
  }, async () => {
    const env = { clock: new VirtualClock(Date.now()), config: configFrom({}) };
    const people: Array<{ key: string; pin: string; id: string }> = [];
    for (let i = 0; i < 6; i++) {
      const u = (await runAdminCommand({ store: observer!, env }, 'users.add', {
        name: `p${i}`,
        balance: '10000',
      })) as { api_key: string; pin_code: string; id: string };
      people.push({ key: u.api_key, pin: u.pin_code, id: u.id });
    }
    const clients = urls.map((u) => jsonClient(`${u}/api/v1`, 16));
    const dead = new Set<number>();
    type Acked = { key: string; id: string; from: number; cents: number };
    const acked = new Map<string, Acked>();
    let cut = 0;
    const send = async (from: number, to: number, cents: number, key: string, start: number): Promise<Reply> => {
      // A request that gets no answer (its process died) is sent again, same key, to the next one.
      for (let k = start; ; k++) {
        const target = k % clients.length;
        if (dead.has(target)) continue;
        try {
          const r = await clients[target]!.call(
            'POST',
            '/wallet/send',
            { 'X-API-Key': people[from]!.key, 'Idempotency-Key': key },
            { recipient_pin: people[to]!.pin, amount: cents / 100 },
          );
          return r;
        } catch {
          // no answer: the process died (with this request in flight, or before it arrived)
          cut++;
          if (servers[target]!.proc.exitCode !== null || servers[target]!.proc.signalCode !== null) dead.add(target);
          if (k - start > 6) throw new Error(`no process answered ${key}`);
        }
      }
    };
    let done = 0;
    let killed = false;
    const loops = Array.from({ length: 12 }, async (_, loop) => {
      for (let iter = 0; iter < 40; iter++) {
        const from = (loop + iter) % 6;
        const to = (from + 1 + (iter % 5)) % 6;
        const cents = 100 + ((loop * 7 + iter) % 50);
        const key = `w${loop}-${iter}`;
        const r = await send(from, to, cents, key, loop + iter);
        expect(r.status, r.text).toBe(201);
        const prior = acked.get(key);
        if (prior) expect(r.body.transaction.id).toBe(prior.id);
        acked.set(key, { key, id: r.body.transaction.id, from, cents });
        if (++done === 150 && !killed) {
          killed = true;
          servers[1]!.proc.kill('SIGKILL'); // the clients find out by themselves
        }
      }
    });
    await Promise.all(loops);
    clients.forEach((c) => c.close());
    expect((await servers[1]!.exited).signal).toBe('SIGKILL');
    expect(acked.size).toBe(480);
    // Every acknowledged transfer is stored, once: one transfer per key, none twice.
    await observer!.durable();
    const ours = new Set(people.map((p) => p.id));
    const transfers = [...observer!.read.col(Transactions).all()].filter(
      (t) => t.type === 'transfer' && ours.has(t.sender_id!),
    );
    expect(transfers.length).toBe(480);
    const byId = new Map(transfers.map((t) => [t.id, t]));
    for (const a of acked.values()) {
      const t = byId.get(a.id);
      expect(t, a.key).toBeDefined();
      expect([t!.sender_id, t!.amount_cents]).toEqual([people[a.from]!.id, a.cents]);
    }
    for (const [i, p] of people.entries()) {
      const sent = [...acked.values()].filter((a) => a.from === i).reduce((s, a) => s + a.cents, 0);
      expect(observer!.read.col(Accounts).get(p.id)!.balance_cents).toBe(1_000_000 - sent);
    }
    assertConserved(observer!.read, 'after the kill');
    // requests were in flight at the killed process when it died (and were answered by the others)
    expect(cut).toBeGreaterThan(0);
  });
});
