import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import supertest from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../src/admin/commands.js';
import { callAdmin } from '../../src/admin/socket.js';
import { createApp } from '../../src/api/app.js';
import { createScheduler } from '../../src/clock/scheduler.js';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { configFrom } from '../../src/config/load.js';
import { Transactions } from '../../src/domain/wallet/transactions.js';
import { claimingScheduler, prepareJobClaims } from '../../src/deployment/pg-jobs.js';
import { PgRateStore, prepareRateTable } from '../../src/deployment/pg-rate-store.js';
import type { BotStatus } from '../../src/runtime/host/bot-host.js';
import { observeCommits } from '../../src/store/core/commit-signal.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { startServer } from '../../src/server.js';
import { tempDir } from '../helpers/api.js';
import { testDatabase } from '../helpers/pg-db.js';
import { eventually } from '../helpers/serve-child.js';

const T0 = Date.parse('2026-11-21T12:00:00Z');

/**
 * Two API processes on one database, in one test process: two PgStores (each its own memory,
 * connections and notifications) with an app each, as two `pinbot serve` behind a balancer.
 */
describe('several processes on one PostgreSQL database', () => {
  const stores: PgStore[] = [];
  afterAll(async () => {
    for (const s of stores) await s.close().catch(() => undefined);
  });

  const twoProcesses = async (config: Record<string, unknown> = {}) => {
    const url = await testDatabase();
    const one = async () => {
      const store = await PgStore.open({ url, warn: () => undefined });
      stores.push(store);
      await prepareRateTable(store.pool, store.schema);
      const clock = new VirtualClock(T0);
      const env = { clock, config: configFrom({ rate_limits: { enabled: false }, ...config }) };
      const rateStore = (bucket: string) => new PgRateStore(store.pool, store.schema, clock, bucket);
      // as serve does: the app hears the commits of both processes (conditional reads use them)
      const { app } = createApp({
        ...observeCommits(store),
        env,
        log: pino({ level: 'silent' }),
        shared: { rateStore },
      });
      return { store, env, clock, http: supertest(app) };
    };
    return Promise.all([one(), one()]);
  };

  it(
    'the same Idempotency-Key sent to two processes at once has one effect; the other ' + 'request gets its replay',
    async () => {
      const [a, b] = await twoProcesses();
      const alice = (await runAdminCommand({ store: a.store, env: a.env }, 'users.add', {
        name: 'Alice',
        balance: '1000',
      })) as { api_key: string };
      const bob = (await runAdminCommand({ store: a.store, env: a.env }, 'users.add', { name: 'Bob' })) as {
        pin_code: string;
      };
      await b.store.durable();
      const send = (p: typeof a, key: string) =>
        p.http
          .post('/api/v1/wallet/send')
          .set({ 'X-API-Key': alice.api_key, 'Idempotency-Key': key })
          .send({ recipient_pin: bob.pin_code, amount: 1 });
      for (let i = 0; i < 25; i++) {
        const [ra, rb] = await Promise.all([send(a, `k${i}`), send(b, `k${i}`)]);
        expect([ra.status, rb.status]).toEqual([201, 201]);
        expect(ra.text).toBe(rb.text);
        expect([ra.headers['idempotent-replayed'], rb.headers['idempotent-replayed']].filter(Boolean)).toEqual([
          'true',
        ]);
      }
      await a.store.durable();
      const transfers = [...a.store.read.col(Transactions).all()].filter((t) => t.type === 'transfer');
      expect(transfers.length).toBe(25);
      const balance = await b.http.get('/api/v1/wallet/balance').set('X-API-Key', alice.api_key).expect(200);
      expect(balance.body.balance).toBe(975);
    },
  );

  it(
    'a key made a moment ago through another process works at once (an unknown key is ' +
      'looked up again after catching up)',
    async () => {
      const [a, b] = await twoProcesses();
      // a hears nothing of b's writes by notification: only the look-up after catching up can find the key
      await (
        a.store as unknown as { listener: { client: { query(q: string): Promise<unknown> } } }
      ).listener.client.query('UNLISTEN *');
      const u = (await runAdminCommand({ store: b.store, env: b.env }, 'users.add', { name: 'Dan' })) as {
        api_key: string;
        id: string;
      };
      const me = await a.http.get('/api/v1/me').set('X-API-Key', u.api_key).expect(200);
      expect(me.body.id).toBe(u.id);
      await a.http
        .get('/api/v1/me')
        .set('X-API-Key', 'pinbot_' + 'x'.repeat(43))
        .expect(401);
    },
  );

  it('a conditional read on one process sees a write made through the other (no stale 304)', async () => {
    const [a, b] = await twoProcesses();
    const alice = (await runAdminCommand({ store: a.store, env: a.env }, 'users.add', { name: 'Alice' })) as {
      api_key: string;
      pin_code: string;
    };
    const bob = (await runAdminCommand({ store: a.store, env: a.env }, 'users.add', { name: 'Bob' })) as {
      api_key: string;
    };
    const carol = (await runAdminCommand({ store: a.store, env: a.env }, 'users.add', { name: 'Carol' })) as {
      api_key: string;
      pin_code: string;
    };
    await eventually(async () => (await b.http.get('/api/v1/me').set('X-API-Key', carol.api_key)).status === 200);
    const group = (
      await b.http
        .post('/api/v1/conversations')
        .set('X-API-Key', bob.api_key)
        .send({ participant_pins: [alice.pin_code, carol.pin_code], name: 'trio' })
        .expect(201)
    ).body as { id: string };
    await eventually(
      async () =>
        ((await a.http.get('/api/v1/conversations').set('X-API-Key', carol.api_key)).body.conversations ?? [])
          .length === 1,
    );
    const tag = (await a.http.get('/api/v1/conversations').set('X-API-Key', carol.api_key)).headers.etag as string;
    expect(
      (await a.http.get('/api/v1/conversations').set({ 'X-API-Key': carol.api_key, 'If-None-Match': tag })).status,
    ).toBe(304);
    // Carol leaves through process b: process a answers her a new list, not a 304
    await b.http.post(`/api/v1/conversations/${group.id}/leave`).set('X-API-Key', carol.api_key).send({}).expect(200);
    await eventually(
      async () =>
        (await a.http.get('/api/v1/conversations').set({ 'X-API-Key': carol.api_key, 'If-None-Match': tag })).status ===
        200,
    );
    expect((await a.http.get('/api/v1/conversations').set('X-API-Key', carol.api_key)).body.conversations).toEqual([]);
  });

  it('rate limits count across processes: a budget of 5 is 5 whichever process the requests reach', async () => {
    const [a, b] = await twoProcesses({ rate_limits: { enabled: true, general: { limit: 5, window: '1h' } } });
    const u = (await runAdminCommand({ store: a.store, env: a.env }, 'users.add', { name: 'Carol' })) as {
      api_key: string;
    };
    await b.store.durable();
    const me = (p: typeof a) => p.http.get('/api/v1/me').set('X-API-Key', u.api_key);
    const statuses = [];
    for (const p of [a, b, a, b, a, b, a]) statuses.push((await me(p)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    // the window is on the injected clock: an hour later both processes let requests through
    a.clock.set(T0 + 3_600_001);
    b.clock.set(T0 + 3_600_001);
    expect((await me(b)).status).toBe(200);
    expect((await me(a)).status).toBe(200);
  });

  it('a cron job runs once per due time, whichever process fires it', async () => {
    const [a, b] = await twoProcesses();
    await prepareJobClaims(a.store.pool, a.store.schema);
    const runs: Array<[string, string]> = [];
    for (const [name, p] of [
      ['a', a],
      ['b', b],
    ] as const) {
      const scheduler = claimingScheduler(createScheduler(p.clock), p.store.pool, p.store.schema, name);
      scheduler.add('nightly', '0 0 * * *', (at) => void runs.push([name, at.toISOString()]));
    }
    await Promise.all([a.clock.advance(86_400_000), b.clock.advance(86_400_000)]);
    await Promise.all([b.clock.advance(86_400_000), a.clock.advance(86_400_000)]);
    expect(runs.map(([, at]) => at)).toEqual(['2026-11-22T00:00:00.000Z', '2026-11-23T00:00:00.000Z']);
  });
  it('serve on a database: the bots are shared out by lease, and a process that stops hands its bots to the other', {
    timeout: 30_000,
  }, async () => {
    const url = await testDatabase();
    const tmp = tempDir('pinbot-shared-');
    mkdirSync(join(tmp.dir, 'bots'));
    for (const n of ['one', 'two'])
      writeFileSync(
        join(tmp.dir, 'bots', `${n}.yaml`),
        `name: ${n}\nas: Bot ${n}\ncreate_user: true\nrules:\n  - id: r\n    on: ` +
          `message.received\n    do:\n      - reply: hi\n`,
      );
    const config = configFrom({
      store: { driver: 'postgres', url },
      bots: { dir: join(tmp.dir, 'bots'), lease_ttl: '600ms' },
      log: { level: 'silent' },
    });
    const d1 = join(tmp.dir, 'd1');
    const d2 = join(tmp.dir, 'd2');
    const first = await startServer({ dataDir: d1, config, port: 0, virtualClock: T0 });
    const second = await startServer({ dataDir: d2, config, port: 0, virtualClock: T0 });
    const status = async (dir: string) =>
      Object.fromEntries(
        ((await callAdmin(dir, 'bots.status')) as { bots: BotStatus[] }).bots.map((b) => [b.name, b.status]),
      );
    try {
      // one bot each, once the second process has joined (renewals every 200 ms)
      const split = await eventually(
        async () => {
          const [a, b] = [await status(d1), await status(d2)];
          const running = (s: Record<string, string>) => Object.keys(s).filter((k) => s[k] === 'running');
          return running(a).length === 1 && running(b).length === 1 ? { a, b } : undefined;
        },
        20_000,
        'one bot in each process',
      );
      expect(Object.values(split.a).sort()).toEqual(['elsewhere', 'running']);
      expect((await supertest(second.http).get('/healthz')).body).toEqual({ status: 'ok' });
      // the admin CLI's direct path and both servers see one state
      const u = (await runAdminCommand({ store: first.store, env: first.env }, 'users.add', { name: 'Eve' })) as {
        api_key: string;
      };
      await supertest(second.http).get('/api/v1/me').set('X-API-Key', u.api_key).expect(200);
      // the first stops: its bot is handed back at once and the second runs both
      await first.close();
      await eventually(
        async () => Object.values(await status(d2)).every((s) => s === 'running'),
        10_000,
        'both bots in the second process',
      );
    } finally {
      await second.close();
      await first.close();
      tmp.cleanup();
    }
  });
});
