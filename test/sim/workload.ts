import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import PQueue from 'p-queue';
import { pino } from 'pino';
import { runAdminCommand } from '../../src/admin/commands.js';
import { createApp } from '../../src/api/app.js';
import { configFrom } from '../../src/config/load.js';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { Transactions } from '../../src/domain/wallet/transactions.js';
import { runUbi } from '../../src/domain/wallet/ubi.js';
import { FileStore } from '../../src/store/file/file-store.js';
import { MemoryStore } from '../../src/store/core/memory-store.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import type { Store } from '../../src/store/core/types.js';
import { observeCommits } from '../../src/store/core/commit-signal.js';
import { tempDir } from '../helpers/api.js';
import { assertConserved, type Ledger } from './ledger.js';
import { makePlan, type Op } from './plan.js';
import { rng } from './rng.js';
import { jsonClient, type Reply } from './client.js';
import { Model, type Sent } from './model.js';

export interface SimOptions {
  seed: number;
  /** Operations in the plan (default 2,000). */
  ops?: number;
  /** Operations in flight at once (default 32). */
  concurrency?: number;
  users?: number;
  /** `memory` (fast), `file` (the journaled store, fsync and group commit) or `postgres` (`url`). */
  store?: 'memory' | 'file' | 'postgres';
  /** The database of `store: 'postgres'` (a fresh one). */
  url?: string;
  /**
   * Servers already running on one database (e.g. three `pinbot serve`): requests go to them in
   * turn (a retry or a race reaches another process than the first call), and `store` — a
   * store of this process on the same database — adds the users, pays UBI days and is where the
   * books are checked after every operation.
   */
  cluster?: { urls: string[]; store: Store };
}

export interface SimReport {
  seed: number;
  ops: number;
  requests: number;
  /** How often each outcome was seen, e.g. `send 201`, `answer 409`. */
  outcomes: Record<string, number>;
  ledger: Ledger;
}

/** A failed run: the message names the seed and the operation. */
export class SimFailure extends Error {
  constructor(
    readonly seed: number,
    message: string,
  ) {
    super(`seed ${seed}: ${message}`);
    this.name = 'SimFailure';
  }
}

const T0 = Date.parse('2026-11-21T12:00:00Z');
const DAY = 86_400_000;

/**
 * Runs one seeded wallet workload over real HTTP against the API: sends, accepts, declines,
 * overdraw attempts, bad amounts, accept racing decline, wrong parties, Idempotency-Key retries
 * and duplicates, reads and UBI days — `concurrency` in flight. After every operation the
 * books must balance (balances + pending = UBI + grants); at the end every balance and every
 * transfer's state must match a model built from the responses alone.
 *
 * @example await simulate({ seed: 7 }) // throws SimFailure on any violation
 */
export async function simulate({
  seed,
  ops = 2000,
  concurrency = 32,
  users = 8,
  store: kind = 'memory',
  url,
  cluster,
}: SimOptions): Promise<SimReport> {
  const r = rng(seed);
  const plan = makePlan(r, { ops, users });
  const tmp = kind === 'file' && !cluster ? tempDir('pinbot-sim-') : undefined;
  // the commit feed `serve` has: every write of the simulation goes through it
  const { store, commits } = observeCommits(
    cluster?.store ??
      (tmp
        ? await FileStore.open(tmp.dir)
        : kind === 'postgres'
          ? await PgStore.open({ url: url! })
          : new MemoryStore()),
  );
  const clock = new VirtualClock(T0);
  const env = { clock, config: configFrom({ rate_limits: { enabled: false }, log: { level: 'silent' } }) };
  let http: ReturnType<typeof createServer> | undefined;
  let urls = cluster?.urls;
  if (!urls) {
    const { app } = createApp({ store, commits, env, log: pino({ level: 'silent' }) });
    http = createServer(app);
    // Sockets may sit idle for seconds while a busy machine runs other work: never let the
    // server close one the client is about to reuse (the keep-alive race reads as ECONNRESET).
    http.keepAliveTimeout = 600_000;
    const server = http;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    urls = [`http://127.0.0.1:${(server.address() as AddressInfo).port}`];
  }
  const clients = urls.map((u) => jsonClient(`${u}/api/v1`));
  let turn = 0;
  const client = {
    call: (...args: Parameters<(typeof clients)[0]['call']>) => clients[turn++ % clients.length]!.call(...args),
    close: () => clients.forEach((c) => c.close()),
  };
  const fail = (msg: string): never => {
    throw new SimFailure(seed, msg);
  };
  const model = new Model(fail);
  const outcomes: Record<string, number> = {};
  let requests = 0;
  try {
    const people: Array<{ key: string; pin: string }> = [];
    for (let i = 0; i < users; i++) {
      const cents = r.int(50, 500) * 100;
      const u = (await runAdminCommand({ store, env }, 'users.add', {
        name: `user${i}`,
        balance: String(cents / 100),
      })) as { api_key: string; pin_code: string };
      people.push({ key: u.api_key, pin: u.pin_code });
      model.grant(i, cents);
    }

    const call = (user: number, method: 'GET' | 'POST', path: string, body?: unknown, key?: string): Promise<Reply> => {
      requests++;
      const headers: Record<string, string> = { 'X-API-Key': people[user]!.key };
      if (key) headers['Idempotency-Key'] = key;
      return client.call(method, path, headers, body);
    };
    const sent: Array<Promise<Sent | undefined>> = [];
    const keyed = new Map<number, { user: number; path: string; body: unknown; key: string; first: Promise<Reply> }>();
    const seen = (i: number, what: string, res: Reply, allowed: Array<[number, string?]>) => {
      const code = res.body?.error?.code as string | undefined;
      outcomes[`${what} ${res.status}${code ? ` ${code}` : ''}`] =
        (outcomes[`${what} ${res.status}${code ? ` ${code}` : ''}`] ?? 0) + 1;
      if (!allowed.some(([s, c]) => s === res.status && (c === undefined || c === code)))
        fail(`op ${i} (${what}) answered ${res.status} ${res.text.slice(0, 300)}`);
    };
    const answerPath = (id: string, action: string) => `/wallet/transactions/${id}/${action}`;
    const answered = (i: number, what: string, res: Reply, t: Sent, action: 'accept' | 'decline') => {
      seen(i, what, res, [[200], [409, 'transaction_not_pending'], [409, 'idempotency_key_in_use']]);
      if (res.status === 200 && !res.replayed)
        model.answer(t, action === 'accept' ? 'accepted' : 'declined', `op ${i}`);
    };

    const runOp = async (i: number, op: Op): Promise<void> => {
      switch (op.kind) {
        case 'send': {
          const path = '/wallet/send';
          const body = { recipient_pin: people[op.to]!.pin, amount: op.cents / 100, note: op.note };
          const first = call(op.from, 'POST', path, body, op.key);
          if (op.key) keyed.set(i, { user: op.from, path, body, key: op.key, first });
          const res = await first;
          seen(i, 'send', res, [[201], [400, 'insufficient_funds']]);
          if (res.status !== 201) return;
          const t = res.body.transaction;
          if (t.status !== 'pending' || t.amount !== op.cents / 100 || t.direction !== 'sent')
            fail(`op ${i}: send answered ${res.text}`);
          model.send(i, { id: t.id, from: op.from, to: op.to, cents: op.cents });
          return;
        }
        case 'overdraw':
          return seen(
            i,
            'overdraw',
            await call(op.from, 'POST', '/wallet/send', { recipient_pin: people[op.to]!.pin, amount: 1_000_000 }),
            [[400, 'insufficient_funds']],
          );
        case 'bad_amount':
          return seen(
            i,
            'bad_amount',
            await call(op.from, 'POST', '/wallet/send', { recipient_pin: people[op.to]!.pin, amount: op.amount }),
            [[400, op.code]],
          );
        case 'answer': {
          const t = await sent[op.send];
          if (!t) return;
          const path = answerPath(t.id, op.action);
          const first = call(t.to, 'POST', path, {}, op.key);
          if (op.key) keyed.set(i, { user: t.to, path, body: {}, key: op.key, first });
          return answered(i, op.action, await first, t, op.action);
        }
        case 'race': {
          const t = await sent[op.send];
          if (!t) return;
          const accept = () => call(t.to, 'POST', answerPath(t.id, 'accept'), {});
          const decline = () => call(t.to, 'POST', answerPath(t.id, 'decline'), {});
          const [a, d] = op.acceptFirst
            ? await Promise.all([accept(), decline()])
            : await Promise.all([decline(), accept()]).then(([dd, aa]) => [aa, dd] as const);
          if (a.status === 200 && d.status === 200) fail(`op ${i}: accept and decline of ${t.id} both succeeded`);
          answered(i, 'race accept', a, t, 'accept');
          answered(i, 'race decline', d, t, 'decline');
          return;
        }
        case 'wrong_party': {
          const t = await sent[op.send];
          if (!t) return;
          const who = op.who === 'sender' ? t.from : [...Array(users).keys()].find((u) => u !== t.from && u !== t.to)!;
          const res = await call(who, 'POST', answerPath(t.id, op.action), {});
          return seen(
            i,
            `${op.who}`,
            res,
            op.who === 'sender' ? [[403, 'forbidden']] : [[404, 'transaction_not_found']],
          );
        }
        case 'retry': {
          const orig = keyed.get(op.of);
          if (!orig) return;
          const first = await orig.first;
          const res = await call(orig.user, 'POST', orig.path, orig.body, orig.key);
          seen(i, 'retry', res, [[first.status]]);
          if (res.text !== first.text) fail(`op ${i}: retry of op ${op.of} answered ${res.text} after ${first.text}`);
          if (!res.replayed) fail(`op ${i}: retry of op ${op.of} was not marked Idempotent-Replayed`);
          return;
        }
        case 'duplicate': {
          const t = await sent[op.send];
          if (!t) return;
          const path = answerPath(t.id, op.action);
          const both = await Promise.all([call(t.to, 'POST', path, {}, op.key), call(t.to, 'POST', path, {}, op.key)]);
          const done = both.filter((res) => res.body?.error?.code !== 'idempotency_key_in_use');
          if (done.length === 0) fail(`op ${i}: both duplicates were "in use"`);
          if (done.length === 2 && done[0]!.text !== done[1]!.text)
            fail(`op ${i}: duplicates answered differently: ${done[0]!.text} / ${done[1]!.text}`);
          for (const res of both) answered(i, 'duplicate', res, t, op.action);
          return;
        }
        case 'read': {
          const path = {
            balance: '/wallet/balance',
            pending: '/wallet/pending',
            transactions: '/wallet/transactions?limit=20',
          }[op.what];
          const res = await call(op.user, 'GET', path);
          seen(i, `read ${op.what}`, res, [[200]]);
          if (op.what === 'balance' && !(res.body.balance >= 0)) fail(`op ${i}: balance ${res.text}`);
          if (op.what === 'pending' && res.body.pending_transactions.some((p: { amount: number }) => !(p.amount > 0)))
            fail(`op ${i}: pending ${res.text}`);
          return;
        }
        case 'ubi_day': {
          clock.set(clock.now() + DAY);
          const n = await runUbi(store, env);
          if (n !== users) fail(`op ${i}: a UBI day paid ${n} credits to ${users} users`);
          for (let u = 0; u < users; u++) model.ubi(u, 100);
          return;
        }
      }
    };

    const queue = new PQueue({ concurrency });
    let failure: unknown;
    plan.forEach((op, i) => {
      const done = queue.add(async () => {
        if (failure) return;
        await runOp(i, op).catch((err: unknown) => {
          throw err instanceof SimFailure
            ? err
            : new SimFailure(seed, `op ${i} (${op.kind}): ${(err as Error).stack ?? String(err)}`);
        });
        // The books balance at every instant, not just at the end.
        if (cluster) await store.durable();
        assertConserved(store.read, `after op ${i} (${op.kind})`);
      });
      const result = done.then(() => undefined);
      sent[i] =
        op.kind === 'send'
          ? done.then(
              () => model.sentAt(i),
              () => undefined,
            )
          : Promise.resolve(undefined);
      result.catch((err) => {
        failure ??= err;
        queue.clear();
      });
    });
    await queue.onIdle();
    if (failure)
      throw failure instanceof SimFailure ? failure : new SimFailure(seed, (failure as Error).stack ?? String(failure));

    // Every balance and every transfer as the responses said.
    let apiTotal = 0;
    for (let u = 0; u < users; u++) {
      const bal = await call(u, 'GET', '/wallet/balance');
      const pend = await call(u, 'GET', '/wallet/pending');
      const cents = Math.round(bal.body.balance * 100);
      if (cents !== model.balance(u)) fail(`user${u} has ${cents} cents, the model says ${model.balance(u)}`);
      apiTotal +=
        cents +
        pend.body.pending_transactions.reduce((s: number, p: { amount: number }) => s + Math.round(p.amount * 100), 0);
    }
    await store.durable();
    for (const t of model.transfers()) {
      const stored = store.read.col(Transactions).get(t.id)?.status;
      if (stored !== (t.state ?? 'pending'))
        fail(`transfer ${t.id} is ${stored}, the responses said ${t.state ?? 'pending'}`);
    }
    const ledger = assertConserved(store.read, 'at the end');
    if (ledger.grants !== model.grants || ledger.ubi !== model.ubiTotal)
      fail(`grants ${ledger.grants}/${model.grants}, ubi ${ledger.ubi}/${model.ubiTotal}`);
    if (apiTotal !== model.grants + model.ubiTotal)
      fail(`through the API, balances + pending = ${apiTotal}, grants + UBI = ${model.grants + model.ubiTotal}`);
    return { seed, ops, requests, outcomes, ledger };
  } finally {
    client.close();
    if (http) {
      const server = http;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    if (!cluster) await store.close();
    tmp?.cleanup();
  }
}
