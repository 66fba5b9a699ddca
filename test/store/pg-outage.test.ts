import { afterEach, describe, expect, it } from 'vitest';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { testApi, type TestApi } from '../helpers/api.js';
import { testDatabase } from '../helpers/pg-db.js';
import { tcpRelay, type TcpRelay } from '../helpers/tcp-cut.js';

// Issue 30 item 10: PostgreSQL gone with a write in flight made every read of every user wait
// until it was back (durable() awaited the stuck commit). The database is reached through a
// relay the test cuts: the real PostgreSQL of the test run stays up for the other tests.

let relay: TcpRelay | undefined;
let api: TestApi | undefined;
afterEach(async () => {
  relay?.restore();
  await api?.close().catch(() => undefined);
  await relay?.close();
  relay = api = undefined;
});

async function throughRelay(readWaitMs?: number): Promise<{ api: TestApi; relay: TcpRelay }> {
  const url = new URL(await testDatabase());
  relay = await tcpRelay(Number(url.port));
  url.port = String(relay.port);
  const store = await PgStore.open({
    url: url.toString(),
    retry: { firstMs: 50, maxMs: 200 },
    warn: () => undefined,
    ...(readWaitMs === undefined ? {} : { readWaitMs }),
  });
  api = await testApi({ store });
  return { api, relay };
}

/**
 * Starts a message from `from` to `to` and returns once its commit is on its way to the
 * database (held by the relay). */
async function writeInFlight(a: TestApi, r: TcpRelay, from: { headers: Record<string, string> }, toPin: string) {
  r.hold();
  const writing = a.http
    .post('/api/v1/messages/send')
    .set(from.headers)
    .send({ recipient_pin: toPin, content: 'in flight' })
    .then((res) => res);
  for (let i = 0; i < 500 && r.heldBytes() === 0; i++) await new Promise((res) => setTimeout(res, 10));
  expect(r.heldBytes()).toBeGreaterThan(0);
  return { writing }; // not the promise itself: an async function's caller would wait for it
}

describe('PostgreSQL gone with a write in flight (round 4)', () => {
  it(
    'reads of every user answer 503 storage_unavailable with Retry-After at once, not ' +
      'when it is back; then 200 again',
    async () => {
      // a long read bound: the 503 must come from knowing the database is gone, not from the bound
      const { api: a, relay: r } = await throughRelay(600_000);
      const alice = await a.user('Alice');
      const bob = await a.user('Bob');
      const { writing } = await writeInFlight(a, r, alice, bob.user.pin_code);
      r.cut(); // the database is gone: the connection in flight and every new one fail
      for (const who of [alice, bob]) {
        const read = await a.http.get('/api/v1/wallet/balance').set(who.headers);
        expect(read.status).toBe(503);
        expect(read.body.error.code).toBe('storage_unavailable');
        expect(Number(read.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
      r.restore();
      // the write in flight is answered: refused (it never reached the database), or written
      const w = await writing;
      expect([201, 503]).toContain(w.status);
      let status = 0;
      for (let i = 0; i < 200 && status !== 200; i++) {
        status = (await a.http.get('/api/v1/wallet/balance').set(bob.headers)).status;
        if (status !== 200) await new Promise((res) => setTimeout(res, 25));
      }
      expect(status).toBe(200);
    },
  );

  it(
    'a database that stops answering (no error, nothing back): a read waits ' + 'store.read_wait at most, then 503',
    async () => {
      const { api: a, relay: r } = await throughRelay(200);
      const alice = await a.user('Alice');
      const bob = await a.user('Bob');
      const { writing } = await writeInFlight(a, r, alice, bob.user.pin_code);
      const read = await a.http.get('/api/v1/wallet/balance').set(bob.headers);
      expect(read.status).toBe(503);
      expect(read.body.error.code).toBe('storage_unavailable');
      expect(Number(read.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      r.restore();
      expect((await writing).status).toBe(201);
      expect((await a.http.get('/api/v1/wallet/balance').set(bob.headers)).status).toBe(200);
    },
  );
});
