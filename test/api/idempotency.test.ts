import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotencyRecords } from '../../src/api/writes/idempotency.js';
import { MemoryStore } from '../../src/store/core/memory-store.js';
import type { Store, Tx } from '../../src/store/core/types.js';
import type { CommittedWrite } from '../../src/store/core/commit-signal.js';
import { tempDir, testApi, type TestApi } from '../helpers/api.js';
import { Notes, testRoutes } from '../helpers/test-routes.js';

const post = (
  api: TestApi,
  headers: Record<string, string>,
  key: string | undefined,
  body: unknown,
  path = '/api/v1/test/notes',
) => {
  const req = api.http.post(path).set(headers).set('Content-Type', 'application/json');
  if (key !== undefined) req.set('Idempotency-Key', key);
  return req.send(typeof body === 'string' ? body : JSON.stringify(body));
};

describe('Idempotency-Key', () => {
  let api: TestApi;
  let alice: Awaited<ReturnType<TestApi['user']>>;
  let bob: Awaited<ReturnType<TestApi['user']>>;
  const count = (u: { user: { id: string } }) => api.store.read.col(Notes).ids('user', u.user.id).length;
  beforeAll(async () => {
    api = await testApi({ routes: testRoutes });
    alice = await api.user('Alice');
    bob = await api.user('Bob');
  });
  afterAll(() => api.close());

  it('a retry with the same request replays the first response byte for byte and does not run again', async () => {
    const first = await post(api, alice.headers, 'k-1', { text: 'hello' }).expect(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    // Same JSON, different spacing: the same request.
    const again = await post(api, alice.headers, 'k-1', '{ "text" : "hello" }').expect(201);
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(count(alice)).toBe(1);
  });

  it('without a key every request runs', async () => {
    const before = count(alice);
    await post(api, alice.headers, undefined, { text: 'again' }).expect(201);
    await post(api, alice.headers, undefined, { text: 'again' }).expect(201);
    expect(count(alice)).toBe(before + 2);
  });

  it('the same key with another body or path is 409 idempotency_key_reused and runs nothing', async () => {
    await post(api, alice.headers, 'k-2', { text: 'one' }).expect(201);
    const before = count(alice);
    const other = await post(api, alice.headers, 'k-2', { text: 'two' }).expect(409);
    expect(other.body.error.code).toBe('idempotency_key_reused');
    const path = await post(api, alice.headers, 'k-2', { text: 'one' }, '/api/v1/test/messages').expect(409);
    expect(path.body.error.code).toBe('idempotency_key_reused');
    expect(count(alice)).toBe(before);
  });

  it('keys belong to a user: the same key from another user is a new request', async () => {
    const res = await post(api, bob.headers, 'k-1', { text: 'hello' }).expect(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(count(bob)).toBe(1);
  });

  it('validation failures are not stored: the key stays free for the corrected request', async () => {
    const bad = await post(api, alice.headers, 'k-3', { text: '' }).expect(400);
    expect(bad.body.error.code).toBe('validation_failed');
    await post(api, alice.headers, 'k-3', '{"text": ').expect(400);
    const good = await post(api, alice.headers, 'k-3', { text: 'fixed' }).expect(201);
    expect(good.headers['idempotent-replayed']).toBeUndefined();
    expect(api.store.read.col(IdempotencyRecords).count()).toBeGreaterThan(0);
  });

  it('a business-rule refusal is stored and replayed, even if the retry would now succeed', async () => {
    const first = await post(api, alice.headers, 'k-4', { text: 'refuse' }).expect(400);
    expect(first.body.error.code).toBe('insufficient_funds');
    const again = await post(api, alice.headers, 'k-4', { text: 'refuse' }).expect(400);
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('a bug (500) is not stored: the retry runs again', async () => {
    await post(api, alice.headers, 'k-5', { text: 'boom' }).expect(500);
    const again = await post(api, alice.headers, 'k-5', { text: 'boom' }).expect(500);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
  });

  it('a key must be 1 to 255 characters', async () => {
    const res = await post(api, alice.headers, 'x'.repeat(256), { text: 'long' }).expect(400);
    expect(res.body.error.details).toEqual([
      { path: 'headers.idempotency-key', message: 'must be 1 to 255 characters' },
    ]);
    await post(api, alice.headers, 'y'.repeat(255), { text: 'long' }).expect(201);
  });

  it('outcomes older than the retention are swept; recent ones are kept', async () => {
    const start = api.clock.now();
    await post(api, alice.headers, 'k-old', { text: 'old' }).expect(201);
    api.clock.set(start + 3 * 86_400_000);
    await post(api, alice.headers, 'k-new', { text: 'new' }).expect(201);
    const swept = await api.idempotency.sweep();
    expect(swept).toBeGreaterThanOrEqual(1);
    // The old key is free again; the new one still replays.
    const old = await post(api, alice.headers, 'k-old', { text: 'old, reused' }).expect(201);
    expect(old.headers['idempotent-replayed']).toBeUndefined();
    expect((await post(api, alice.headers, 'k-new', { text: 'new' }).expect(201)).headers['idempotent-replayed']).toBe(
      'true',
    );
  });

  it('an outcome stored with a fingerprint of the body in received key order (before canonical ones) still replays', async () => {
    // as stored before fingerprints were canonical: the hash of the body as received
    const sha = (s: string) => createHash('sha256').update(s).digest('hex');
    const raw = '{"text":"legacy","count":2}';
    const id = `idem_${sha(`${alice.user.id}\u0000k-legacy`)}`;
    await api.store.transaction((tx) =>
      tx.col(IdempotencyRecords).insert({
        id,
        user_id: alice.user.id,
        fingerprint: sha(`POST /api/v1/test/notes\n${raw}`),
        status: 201,
        body: '{"stored":"before the upgrade"}',
        created_at: api.clock.now(),
      }),
    );
    const before = count(alice);
    const again = await post(api, alice.headers, 'k-legacy', raw).expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe('{"stored":"before the upgrade"}');
    // the legacy form is the order received: another order or another body is another request
    const reordered = await post(api, alice.headers, 'k-legacy', '{"count":2,"text":"legacy"}').expect(409);
    expect(reordered.body.error.code).toBe('idempotency_key_reused');
    await post(api, alice.headers, 'k-legacy', { text: 'other' }).expect(409);
    expect(count(alice)).toBe(before);
  });
});

/** A store whose commits stay "in flight" until the test opens the gate. */
class GatedStore extends MemoryStore implements Store {
  private gate: Promise<void> = Promise.resolve();
  open: () => void = () => undefined;
  close_gate(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }
  override async transaction<R>(fn: (tx: Tx) => R): Promise<R> {
    const result = await super.transaction(fn);
    await this.gate;
    return result;
  }
  // the server's commit feed writes through this one: held at the same gate
  override async transactionNoted<R>(
    fn: (tx: Tx) => R,
    onCommit: (writes: readonly CommittedWrite[]) => void,
  ): Promise<R> {
    let writes: readonly CommittedWrite[] = [];
    const result = await super.transactionNoted(fn, (w) => (writes = w));
    await this.gate;
    if (writes.length) onCommit(writes);
    return result;
  }
  override async durable(): Promise<void> {
    await this.gate;
  }
}

describe('Idempotency-Key while the first request is still running', () => {
  it('a retry is 409 idempotency_key_in_use until the first has committed, then replays it', async () => {
    const store = new GatedStore();
    const api = await testApi({ routes: testRoutes, store });
    try {
      const alice = await api.user('Alice');
      store.close_gate();
      const first = post(api, alice.headers, 'k-slow', { text: 'slow' }).then((r) => r);
      // Let the first request reach its commit.
      while (store.read.col(Notes).count() === 0) await new Promise((r) => setImmediate(r));
      const second = await post(api, alice.headers, 'k-slow', { text: 'slow' }).expect(409);
      expect(second.body.error.code).toBe('idempotency_key_in_use');
      store.open();
      const done = await first;
      expect(done.status).toBe(201);
      const third = await post(api, alice.headers, 'k-slow', { text: 'slow' }).expect(201);
      expect(third.text).toBe(done.text);
      expect(store.read.col(Notes).count()).toBe(1);
    } finally {
      store.open();
      await api.close();
    }
  });
});

describe('Idempotency-Key across a restart', () => {
  it('a stored outcome survives the process: the retry after a restart is replayed', async () => {
    const tmp = tempDir();
    try {
      const a = await testApi({ routes: testRoutes, dir: tmp.dir });
      const alice = await a.user('Alice');
      const first = await post(a, alice.headers, 'k-restart', { text: 'durable' }).expect(201);
      await a.close();
      const b = await testApi({ routes: testRoutes, dir: tmp.dir });
      const again = await post(b, alice.headers, 'k-restart', { text: 'durable' }).expect(201);
      expect(again.text).toBe(first.text);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(b.store.read.col(Notes).count()).toBe(1);
      await b.close();
    } finally {
      tmp.cleanup();
    }
  });
});

/** A store that throws (instead of giving a rejected promise) on its next `throws` commits. */
class ThrowingStore extends MemoryStore implements Store {
  throws = 0;
  override transaction<R>(fn: (tx: Tx) => R): Promise<R> {
    if (this.throws > 0 && this.throws--) throw new Error('the disk went away');
    return super.transaction(fn);
  }
  override transactionNoted<R>(fn: (tx: Tx) => R, onCommit: (writes: readonly CommittedWrite[]) => void): Promise<R> {
    if (this.throws > 0 && this.throws--) throw new Error('the disk went away');
    return super.transactionNoted(fn, onCommit);
  }
}

describe('Idempotency-Key when the store throws before it gives its promise', () => {
  it('the write fails with 500 and its key is free again: the retry runs, not 409 in use', async () => {
    const store = new ThrowingStore();
    const api = await testApi({ routes: testRoutes, store });
    try {
      const alice = await api.user('Alice');
      store.throws = 1;
      const failed = await post(api, alice.headers, 'k-throw', { text: 'once' });
      expect(failed.status).toBe(500);
      expect(store.read.col(Notes).count()).toBe(0);
      const retry = await post(api, alice.headers, 'k-throw', { text: 'once' }).expect(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(store.read.col(Notes).count()).toBe(1);
    } finally {
      await api.close();
    }
  });
});
