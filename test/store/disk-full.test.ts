import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StorageUnavailableError } from '../../src/store/core/errors.js';
import { FileStore, type FileStoreOptions } from '../../src/store/file/file-store.js';
import { openAppendFile, type OpenAppend } from '../../src/store/file/journal-file.js';
import { tempDir, testApi } from '../helpers/api.js';
import { eventually } from '../helpers/serve-child.js';
import { Counters, Items } from '../helpers/store-fixtures.js';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * The real files, except that while `full` is set every append writes half of its bytes and
 * then fails with ENOSPC, as a full disk does. fsync stays real.
 */
function fillableDisk() {
  const disk = { full: false, refused: 0, openAppend: undefined as unknown as OpenAppend };
  disk.openAppend = async (path) => {
    const real = await openAppendFile(path);
    return {
      ...real,
      async append(data) {
        if (!disk.full) return real.append(data);
        disk.refused++;
        if (data.length > 1) await real.append(data.subarray(0, data.length >> 1));
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), {
          code: 'ENOSPC',
          syscall: 'write',
          errno: -28,
        });
      },
    };
  };
  return disk;
}

async function open(d: string, disk: ReturnType<typeof fillableDisk>, warnings: string[] = []): Promise<FileStore> {
  const opts: FileStoreOptions = {
    openAppend: disk.openAppend,
    retry: { firstMs: 10, maxMs: 40 },
    warn: (m) => warnings.push(m),
  };
  const store = await FileStore.open(d, opts);
  cleanups.push(() => store.close());
  return store;
}

const addItem = (store: FileStore, n: number) =>
  store.transaction((tx) => {
    tx.col(Items).insert({ id: `item_${String(n).padStart(8, '0')}`, n });
    tx.col(Counters).put({ id: 'count', value: (tx.col(Counters).get('count')?.value ?? 0) + 1 });
  });

describe('a disk that refuses writes (issue 13, item 5)', () => {
  it(
    'takes back what was not durable, refuses writes, keeps reads, and recovers by ' + 'itself when space returns',
    async () => {
      const t = tempDir('pinbot-full-');
      cleanups.push(t.cleanup);
      const disk = fillableDisk();
      const warnings: string[] = [];
      const store = await open(t.dir, disk, warnings);
      for (let i = 0; i < 3; i++) await addItem(store, i);
      const journalBytes = statSync(join(t.dir, 'journal.jsonl')).size;

      disk.full = true;
      // Ten writes in flight: the first batch fails, everything queued behind it is taken back too.
      const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => addItem(store, 100 + i)));
      expect(results.every((r) => r.status === 'rejected' && r.reason instanceof StorageUnavailableError)).toBe(true);
      expect(store.read.col(Items).count()).toBe(3);
      expect(store.read.col(Counters).get('count')?.value).toBe(3);
      expect(store.seq).toBe(3);
      expect(statSync(join(t.dir, 'journal.jsonl')).size).toBe(journalBytes); // the half-written batch is cut off
      const health = store.health();
      expect(health).toMatchObject({ writable: false, reason: 'ENOSPC (write)' });
      expect(
        warnings.some((w) => w.includes('the journal cannot be written (ENOSPC: no space left on device, write)')),
      ).toBe(true);

      // While it is down: writes are refused at once (nothing runs), reads go on.
      const refusedBefore = disk.refused;
      await expect(addItem(store, 200)).rejects.toBeInstanceOf(StorageUnavailableError);
      await expect(store.durable()).resolves.toBeUndefined();
      expect(store.read.col(Items).count()).toBe(3);
      // It keeps trying by itself (a test write each time), and fails while the disk is full.
      await eventually(() => disk.refused > refusedBefore + 1, 5_000, 'retries');
      expect(store.health().writable).toBe(false);

      disk.full = false;
      await eventually(() => store.health().writable, 5_000, 'recovery');
      await addItem(store, 3);
      expect(store.read.col(Items).count()).toBe(4);
      await store.close();

      const again = await open(t.dir, fillableDisk());
      expect(again.read.col(Items).count()).toBe(4);
      expect(again.read.col(Counters).get('count')?.value).toBe(4);
      expect(again.read.col(Items).get('item_00000100')).toBeUndefined();
    },
  );

  it(
    'over HTTP: writes answer 503 storage_unavailable with Retry-After, reads 200, ' +
      '/healthz 503 degraded; then all is back',
    async () => {
      const t = tempDir('pinbot-full-http-');
      cleanups.push(t.cleanup);
      const disk = fillableDisk();
      const store = await open(t.dir, disk);
      const api = await testApi({ store });
      const alice = await api.user('Alice');
      const bob = await api.user('Bob');
      const send = (content: string) =>
        api.http.post('/api/v1/messages/send').set(alice.headers).send({ recipient_pin: bob.user.pin_code, content });
      await send('before').expect(201);

      disk.full = true;
      const refused = await send('while full').expect(503);
      expect(refused.body).toEqual({
        error: { code: 'storage_unavailable', message: expect.stringContaining('nothing was changed') },
      });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      await send('again').expect(503);
      await api.http.get('/api/v1/me').set(alice.headers).expect(200);
      const health = await api.http.get('/healthz').expect(503);
      expect(health.body).toMatchObject({ status: 'degraded', store: { writable: false, reason: 'ENOSPC (write)' } });
      expect(Number(health.headers['retry-after'])).toBeGreaterThanOrEqual(1);

      disk.full = false;
      await eventually(async () => (await api.http.get('/healthz')).status === 200, 5_000, '/healthz ok');
      expect((await api.http.get('/healthz')).body).toEqual({ status: 'ok' });
      await send('after').expect(201);
      const convs = await api.http.get('/api/v1/conversations').set(bob.headers).expect(200);
      const id = convs.body.conversations[0].id as string;
      const msgs = await api.http.get(`/api/v1/conversations/${id}/messages`).set(bob.headers).expect(200);
      expect(msgs.body.messages.map((m: { content: string }) => m.content)).toEqual(['before', 'after']);
    },
  );
});
