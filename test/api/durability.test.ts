import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/core/memory-store.js';
import { FileStore } from '../../src/store/file/file-store.js';
import { openAppendFile, type OpenAppend } from '../../src/store/file/journal-file.js';
import type { Tx } from '../../src/store/core/types.js';
import type { CommittedWrite } from '../../src/store/core/commit-signal.js';
import { COMMIT_ACK_HEADER, commitAckToken } from '../../src/util/commit-ack.js';
import { tempDir, testApi } from '../helpers/api.js';
import { Notes, testRoutes } from '../helpers/test-routes.js';

/** A store whose commits become durable only when the test says so. */
class SlowDiskStore extends MemoryStore {
  private gate: Promise<void> = Promise.resolve();
  release: () => void = () => undefined;
  durableCalls = 0;
  hold(): void {
    this.gate = new Promise((resolve) => (this.release = resolve));
  }
  override async transaction<R>(fn: (tx: Tx) => R): Promise<R> {
    const r = await super.transaction(fn);
    await this.gate;
    return r;
  }
  // the server's commit feed writes through this one: held at the same gate
  override async transactionNoted<R>(
    fn: (tx: Tx) => R,
    onCommit: (writes: readonly CommittedWrite[]) => void,
  ): Promise<R> {
    let writes: readonly CommittedWrite[] = [];
    const r = await super.transactionNoted(fn, (w) => (writes = w));
    await this.gate;
    if (writes.length) onCommit(writes);
    return r;
  }
  override async durable(): Promise<void> {
    this.durableCalls++;
    await this.gate;
  }
}

describe('responses never show state that is not durable yet', () => {
  it('a read waits for the commit of a write it can already see; the write answers after its commit', async () => {
    const store = new SlowDiskStore();
    const api = await testApi({ routes: testRoutes, store });
    try {
      const alice = await api.user('Alice');
      store.hold();
      const answered: string[] = [];
      const write = api.http
        .post('/api/v1/test/notes')
        .set(alice.headers)
        .send({ text: 'pending' })
        .then((r) => (answered.push('write'), r));
      while (store.read.col(Notes).count() === 0) await new Promise((r) => setImmediate(r));
      const read = api.http
        .get('/api/v1/test/notes')
        .set(alice.headers)
        .then((r) => (answered.push('read'), r));
      while (store.durableCalls === 0) await new Promise((r) => setImmediate(r));
      // Both requests have reached the store and wait for the disk; give a wrong answer every
      // chance to arrive before checking that none did.
      await new Promise((r) => setTimeout(r, 100));
      expect(answered).toEqual([]);
      store.release();
      const [w, r] = await Promise.all([write, read]);
      expect(w.status).toBe(201);
      expect(r.body).toEqual({ total: 1 });
      expect(answered.sort()).toEqual(['read', 'write']);
    } finally {
      store.release();
      await api.close();
    }
  });

  it('on the file store too, where a read with nothing in flight answers at once (Store.isDurable)', async () => {
    // the journal's fdatasync waits for the test: a write is visible, but not durable
    let release: () => void = () => undefined;
    let gate: Promise<void> = Promise.resolve();
    let syncing = 0;
    const openAppend: OpenAppend = async (path) => {
      const f = await openAppendFile(path);
      return {
        ...f,
        append: (d) => f.append(d),
        truncate: (n) => f.truncate(n),
        size: () => f.size(),
        close: () => f.close(),
        sync: async () => (syncing++, await gate, f.sync()),
      };
    };
    const tmp = tempDir('pinbot-durable-');
    const store = await FileStore.open(tmp.dir, { openAppend, warn: () => undefined });
    const api = await testApi({ routes: testRoutes, store });
    try {
      const alice = await api.user('Alice');
      // nothing in flight: answered without waiting
      expect((await api.http.get('/api/v1/test/notes').set(alice.headers).expect(200)).body).toEqual({ total: 0 });
      gate = new Promise((resolve) => (release = resolve));
      const answered: string[] = [];
      const write = api.http
        .post('/api/v1/test/notes')
        .set(alice.headers)
        .send({ text: 'pending' })
        .then((r) => (answered.push('write'), r));
      while (store.read.col(Notes).count() === 0 || syncing === 0) await new Promise((r) => setImmediate(r));
      expect(store.isDurable()).toBe(false);
      const read = api.http
        .get('/api/v1/test/notes')
        .set(alice.headers)
        .then((r) => (answered.push('read'), r));
      await new Promise((r) => setTimeout(r, 100));
      expect(answered).toEqual([]);
      release();
      const [w, r] = await Promise.all([write, read]);
      expect(w.status).toBe(201);
      expect(r.body).toEqual({ total: 1 });
      expect(store.isDurable()).toBe(true);
    } finally {
      release();
      await api.close();
      tmp.cleanup();
    }
  });
});

/** An API over a store whose disk holds every commit, Alice, and the store's commit-ack token. */
async function heldDisk() {
  const slow = new SlowDiskStore();
  const api = await testApi({ routes: testRoutes, store: slow });
  const alice = await api.user('Alice');
  const token = commitAckToken(api.store);
  slow.hold();
  return { slow, api, alice, token };
}

describe('commit-ack: the server answers its own bots at commit (util/commit-ack.ts)', () => {
  it('a write with the store token is answered before it is durable; without it, or with a wrong one, after', async () => {
    const { slow, api, alice, token } = await heldDisk();
    try {
      const answered: string[] = [];
      const post = (name: string, headers: Record<string, string>) =>
        api.http
          .post('/api/v1/test/notes')
          .set({ ...alice.headers, ...headers })
          .send({ text: name })
          .then((r) => (answered.push(name), r));
      // the token's write is answered while the disk holds every commit
      const acked = await post('acked', { [COMMIT_ACK_HEADER]: token });
      expect(acked.status).toBe(201);
      expect(answered).toEqual(['acked']);
      const wrong = post('wrong', { [COMMIT_ACK_HEADER]: `${token.slice(1)}x` });
      const plain = post('plain', {});
      while (slow.read.col(Notes).count() < 3) await new Promise((r) => setImmediate(r));
      // both have reached the store and wait for the disk; give a wrong answer every chance to come
      await new Promise((r) => setTimeout(r, 100));
      expect(answered).toEqual(['acked']);
      // nobody else reads the early-answered write before it is durable
      let read = false;
      const reading = api.http
        .get('/api/v1/test/notes')
        .set(alice.headers)
        .then((r) => ((read = true), r));
      await new Promise((r) => setTimeout(r, 50));
      expect(read).toBe(false);
      slow.release();
      expect((await wrong).status).toBe(201);
      expect((await plain).status).toBe(201);
      expect((await reading).body).toEqual({ total: 3 });
    } finally {
      slow.release();
      await api.close();
    }
  });

  it('a replay of an outcome answered at commit waits until it is durable', async () => {
    const { slow, api, alice, token } = await heldDisk();
    try {
      const post = (headers: Record<string, string>) =>
        api.http
          .post('/api/v1/test/notes')
          .set({ ...alice.headers, 'Idempotency-Key': 'note-1', ...headers })
          .send({ text: 'once' });
      const acked = await post({ [COMMIT_ACK_HEADER]: token });
      expect(acked.status).toBe(201);
      // the same key sent again without the token: its replay shows the outcome once durable
      let replayed = false;
      const again = post({}).then((r) => ((replayed = true), r));
      await new Promise((r) => setTimeout(r, 100));
      expect(replayed).toBe(false);
      slow.release();
      const r = await again;
      expect(r.status).toBe(201);
      expect(r.headers['idempotent-replayed']).toBe('true');
      expect(r.body).toEqual(acked.body);
      expect(slow.read.col(Notes).count()).toBe(1);
    } finally {
      slow.release();
      await api.close();
    }
  });
});
