import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/core/memory-store.js';
import type { Tx } from '../../src/store/core/types.js';
import { testApi } from '../helpers/api.js';
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
      const write = api.http.post('/api/v1/test/notes').set(alice.headers).send({ text: 'pending' }).then((r) => (answered.push('write'), r));
      while (store.read.col(Notes).count() === 0) await new Promise((r) => setImmediate(r));
      const read = api.http.get('/api/v1/test/notes').set(alice.headers).then((r) => (answered.push('read'), r));
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
});
