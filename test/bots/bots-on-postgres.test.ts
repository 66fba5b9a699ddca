import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { callAdmin } from '../../src/admin/socket.js';
import { configFrom } from '../../src/config/load.js';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { Keys, revokeKey } from '../../src/domain/users/keys.js';
import { createUser, findUser } from '../../src/domain/users/users.js';
import type { BotStatus } from '../../src/runtime/host/bot-host.js';
import { TraceLog, type Trace } from '../../src/runtime/state/traces.js';
import { BotKeys, storeKeyVault } from '../../src/deployment/bot-key-vault.js';
import { tracesFromDatabase } from '../../src/deployment/postgres.js';
import { embeddedIdentity } from '../../src/deployment/embedded-identity.js';
import { pgTraceArchive, prepareTraceTable, readPgTraces } from '../../src/deployment/pg-traces.js';
import { startServer } from '../../src/server.js';
import { FileStore } from '../../src/store/file/file-store.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { dataDirIntegrity } from '../../src/deployment/store-integrity.js';
import { exportDataDir, importDataDir } from '../../src/deployment/store-transfer.js';
import { tempDir } from '../helpers/api.js';
import { testDatabase } from '../helpers/pg-db.js';
import { eventually } from '../helpers/serve-child.js';

const T0 = Date.parse('2026-11-21T12:00:00Z');
const silent = pino({ level: 'silent' });

const stores: PgStore[] = [];
const temps: Array<() => void> = [];
afterAll(async () => {
  for (const s of stores) await s.close().catch(() => undefined);
  for (const t of temps) t();
});

/** Two "processes" on one fresh database: a PgStore each (own memory, connections, notifications). */
async function twoStores(): Promise<[PgStore, PgStore]> {
  const url = await testDatabase();
  const a = await PgStore.open({ url, warn: () => undefined });
  const b = await PgStore.open({ url, warn: () => undefined });
  stores.push(a, b);
  return [a, b];
}

const trace = (i: number, content = `message ${i}`): Trace => ({
  bot: 'tip-jar',
  version: '1',
  rule: 'thanks',
  event: { key: `k${i}`, type: 'message.received', summary: `message.received "${content}"` },
  at: new Date(T0 + i * 1000).toISOString(),
  outcome: 'done',
  steps: [{ index: 0, action: 'reply', status: 'done', args: { content } }],
  duration_ms: 1,
});

describe('bots on a shared PostgreSQL database: traces and keys live in it', () => {
  it(
    'a trace history in the database reopens from another process, in order, pruned to ' +
      'its bound, hostile text intact',
    async () => {
      const [a, b] = await twoStores();
      await prepareTraceTable(a.pool, a.schema);
      const log = await TraceLog.over(pgTraceArchive(a.pool, a.schema, 'tip-jar'), 3);
      expect(log.list()).toEqual([]);
      const nasty = 'nul \u0000, a lone \udc00 surrogate, "quotes", \\ and é';
      for (let i = 0; i < 9; i++) log.add(trace(i, i === 8 ? nasty : undefined));
      await log.flush();
      for (let i = 9; i < 11; i++) log.add(trace(i)); // a second batch, another tick
      await log.close();
      // another process (its own pool) opening the bot sees the newest 3, oldest first
      const moved = await TraceLog.over(pgTraceArchive(b.pool, b.schema, 'tip-jar'), 3);
      expect(moved.list().map((t) => t.event.key)).toEqual(['k8', 'k9', 'k10']);
      expect(moved.list()[0]!.steps[0]!.args).toEqual({ content: nasty });
      // 9 rows written with a bound of 3: pruned to the newest 3 once past twice the bound, then 2 more
      const rows = async () =>
        Number(
          (await b.pool.query(`SELECT count(*) AS n FROM "${b.schema}".bot_traces WHERE bot = 'tip-jar'`)).rows[0].n,
        );
      expect(await rows()).toBe(5);
      // the new owner goes on appending where the history stands, and prunes it too
      for (let i = 11; i < 13; i++) moved.add(trace(i));
      await moved.close();
      expect(await rows()).toBe(3);
      expect((await readPgTraces(a.pool, a.schema, 'tip-jar', 10)).map((t) => t.event.key)).toEqual([
        'k10',
        'k11',
        'k12',
      ]);
      // other bots' histories are their own
      expect(await readPgTraces(a.pool, a.schema, 'other', 10)).toEqual([]);
    },
  );

  it(
    "a bot's key made in one process is reused by another (one key, kept in bot_keys, " +
      'no key file); isBotUser knows it everywhere',
    async () => {
      const [a, b] = await twoStores();
      const tmp = tempDir('pinbot-keys-');
      temps.push(tmp.cleanup);
      const env = { clock: new VirtualClock(T0), config: configFrom({}) };
      const idA = embeddedIdentity({ store: a, env, keysDir: join(tmp.dir, 'a', 'keys'), vault: storeKeyVault(a) });
      const idB = embeddedIdentity({ store: b, env, keysDir: join(tmp.dir, 'b', 'keys'), vault: storeKeyVault(b) });
      const first = await idA.keyFor({ bot: 'tip-jar', as: 'Tip Jar', createUser: true });
      expect(first.created).toBe(true);
      const again = await idB.keyFor({ bot: 'tip-jar', as: 'Tip Jar', createUser: true });
      expect(again).toMatchObject({ created: false, apiKey: first.apiKey, keyId: first.keyId });
      expect([...b.read.col(Keys).all()].filter((k) => k.user_id === first.user.id)).toHaveLength(1);
      expect(b.read.col(BotKeys).get('tip-jar')).toMatchObject({
        user_id: first.user.id,
        key_id: first.keyId,
        api_key: first.apiKey,
      });
      expect(existsSync(join(tmp.dir, 'a', 'keys')) || existsSync(join(tmp.dir, 'b', 'keys'))).toBe(false);
      // b runs no bot as Tip Jar, yet knows its user is a bot's (ignore_bots); a person is not
      expect(idB.isBotUser!(first.user.id!)).toBe(true);
      const person = await a.transaction((tx) => createUser(tx, env, { name: 'Alice' }));
      await b.durable();
      expect(idB.isBotUser!(person.id)).toBe(false);
    },
  );

  it('two processes starting one new bot at once make one user and one key between them', async () => {
    const [a, b] = await twoStores();
    const env = { clock: new VirtualClock(T0), config: configFrom({}) };
    const tmp = tempDir('pinbot-keys-');
    temps.push(tmp.cleanup);
    const ids = [a, b].map((s, i) =>
      embeddedIdentity({ store: s, env, keysDir: join(tmp.dir, `${i}`), vault: storeKeyVault(s) }),
    );
    const [ra, rb] = await Promise.all(ids.map((id) => id.keyFor({ bot: 'greeter', as: 'Greeter', createUser: true })));
    expect(ra!.apiKey).toBe(rb!.apiKey);
    expect([ra!.created, rb!.created].sort()).toEqual([false, true]);
    await a.durable();
    expect(a.read.col(BotKeys).count()).toBe(1);
    expect([...a.read.col(Keys).all()]).toHaveLength(1);
    expect(findUser(a.read, 'Greeter')!.id).toBe(ra!.user.id);
  });

  it(
    'store import takes the working key files into bot_keys, and export writes them ' +
      'back: bots keep their keys both ways',
    async () => {
      const tmp = tempDir('pinbot-keymove-');
      temps.push(tmp.cleanup);
      const data = join(tmp.dir, 'data');
      const env = { clock: new VirtualClock(T0), config: configFrom({}) };
      const file = await FileStore.open(data);
      const onFiles = embeddedIdentity({ store: file, env, keysDir: join(data, 'bots', 'keys') });
      const kept = await onFiles.keyFor({ bot: 'tip-jar', as: 'Tip Jar', createUser: true });
      const stale = await onFiles.keyFor({ bot: 'old-bot', as: 'Old Bot', createUser: true });
      await file.transaction((tx) => revokeKey(tx, env, stale.keyId ?? ''));
      await file.close();
      const url = await testDatabase();
      const imported = await importDataDir(data, { url });
      expect(imported.records.bot_keys).toBe(1);
      const db = await PgStore.open({ url, integrity: dataDirIntegrity });
      stores.push(db);
      expect(db.read.col(BotKeys).get('tip-jar')).toMatchObject({ key_id: kept.keyId, api_key: kept.apiKey });
      const onDb = embeddedIdentity({ store: db, env, keysDir: join(tmp.dir, 'unused'), vault: storeKeyVault(db) });
      expect(await onDb.keyFor({ bot: 'tip-jar', as: 'Tip Jar', createUser: true })).toMatchObject({
        created: false,
        apiKey: kept.apiKey,
      });
      const back = join(tmp.dir, 'back');
      const exported = await exportDataDir(back, { url });
      expect(exported.records.bot_keys).toBe(1);
      const again = await FileStore.open(back, { integrity: dataDirIntegrity });
      try {
        const onFilesAgain = embeddedIdentity({ store: again, env, keysDir: join(back, 'bots', 'keys') });
        expect(await onFilesAgain.keyFor({ bot: 'tip-jar', as: 'Tip Jar', createUser: true })).toMatchObject({
          created: false,
          apiKey: kept.apiKey,
        });
      } finally {
        await again.close();
      }
    },
  );

  it(
    'bots.trace on the process that does not hold the bot answers from the database; ' +
      'the next process to run it keeps its key and history',
    async () => {
      const url = await testDatabase();
      const tmp = tempDir('pinbot-botdb-');
      temps.push(tmp.cleanup);
      const botsDir = join(tmp.dir, 'bots');
      mkdirSync(botsDir);
      writeFileSync(
        join(botsDir, 'hello.yaml'),
        'name: hello\nas: Hello Bot\ncreate_user: true\nrules:\n  - id: up\n    on: ' +
          'startup\n    do: [{ log: "up #{{ event.boot }}" }]\n',
      );
      const config = (dir: string) =>
        configFrom({ store: { driver: 'postgres', url }, bots: { dir }, rate_limits: { enabled: false } });
      const p1 = await startServer({
        dataDir: join(tmp.dir, 'p1'),
        config: config(botsDir),
        port: 0,
        host: '127.0.0.1',
        log: silent,
        virtualClock: T0,
      });
      const p2 = await startServer({
        dataDir: join(tmp.dir, 'p2'),
        config: config(botsDir),
        port: 0,
        host: '127.0.0.1',
        log: silent,
        virtualClock: T0,
      });
      const traced = (data: string) => callAdmin(data, 'bots.trace', { name: 'hello' }) as Promise<{ traces: Trace[] }>;
      const status = async (data: string) =>
        ((await callAdmin(data, 'bots.status')) as { bots: BotStatus[] }).bots[0]?.status;
      try {
        // one of the two holds the bot's lease and runs it; the other says where it runs
        const [runs, other] = await eventually(
          async () => {
            const [s1, s2] = [await status(join(tmp.dir, 'p1')), await status(join(tmp.dir, 'p2'))];
            if (s1 === 'running' && s2 === 'elsewhere') return ['p1', 'p2'];
            if (s2 === 'running' && s1 === 'elsewhere') return ['p2', 'p1'];
            return undefined;
          },
          15_000,
          'the bot running in one process',
        );
        await eventually(
          async () => (await traced(join(tmp.dir, runs))).traces.length === 1,
          15_000,
          'the startup run',
        );
        const seen = (await traced(join(tmp.dir, other))).traces;
        expect(seen).toHaveLength(1);
        expect(seen[0]).toMatchObject({ bot: 'hello', rule: 'up', outcome: 'done' });
        await expect(callAdmin(join(tmp.dir, other), 'bots.trace', { name: 'nobody' })).rejects.toThrow(
          /no bot named nobody has traces/,
        );
      } finally {
        await p2.close();
        await p1.close();
      }
      // the bot moves to a third process: same key (no new one, no key file), history carried on
      const next = await startServer({
        dataDir: join(tmp.dir, 'p3'),
        config: config(botsDir),
        port: 0,
        host: '127.0.0.1',
        log: silent,
        virtualClock: T0,
      });
      try {
        const traces = await eventually(
          async () => {
            const t = (await traced(join(tmp.dir, 'p3'))).traces;
            return t.length === 2 ? t : undefined;
          },
          15_000,
          'the second startup run',
        );
        expect(traces.map((t) => [t.rule, t.outcome])).toEqual([
          ['up', 'done'],
          ['up', 'done'],
        ]);
        const user = findUser(next.store.read, 'Hello Bot')!;
        expect(
          [...next.store.read.col(Keys).all()].filter((k) => k.user_id === user.id && k.revoked_at === null),
        ).toHaveLength(1);
        expect([...next.store.read.col(Keys).all()].filter((k) => k.user_id === user.id)).toHaveLength(1);
        for (const p of ['p1', 'p2', 'p3']) expect(existsSync(join(tmp.dir, p, 'bots', 'keys'))).toBe(false);
        for (const p of ['p1', 'p2', 'p3']) expect(existsSync(join(tmp.dir, p, 'bots', 'traces'))).toBe(false);
      } finally {
        await next.close();
      }
      // no process runs: offline `pinbot bots trace` reads the database of the config
      expect((await tracesFromDatabase(config(botsDir), 'hello', 10))?.map((t) => t.rule)).toEqual(['up', 'up']);
      expect(await tracesFromDatabase(config(botsDir), 'nobody', 10)).toBeUndefined();
    },
  );
});
