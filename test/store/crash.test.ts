import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileStore } from '../../src/store/file/file-store.js';
import { tempDir } from '../helpers/api.js';
import { spawnNode, spawnTs } from '../helpers/spawn.js';
import { Counters, Items } from '../helpers/store-fixtures.js';

const CHILD = 'test/helpers/store-child.ts';
const cleanups: Array<() => void | Promise<void>> = [];
// Tests run concurrently (they mostly wait for child processes), so clean up at the end.
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function dir(): string {
  const t = tempDir('pinbot-crash-');
  cleanups.push(t.cleanup);
  return t.dir;
}

async function open(d: string): Promise<FileStore> {
  const warnings: string[] = [];
  const store = await FileStore.open(d, { warn: (m) => warnings.push(m) });
  cleanups.push(() => store.close());
  return store;
}

const acked = (stdout: string) => [...stdout.matchAll(/^acked (\S+)$/gm)].map((m) => m[1]!);

/** Every acknowledged item is there, and the counter written in the same transactions agrees. */
function expectConsistent(store: FileStore, ids: string[]): void {
  const items = store.read.col(Items);
  const missing = ids.filter((id) => !items.get(id));
  expect(missing).toEqual([]);
  expect(store.read.col(Counters).get('count')?.value).toBe(items.count());
  expect(items.count()).toBeGreaterThanOrEqual(ids.length);
}

describe.concurrent('file store under crashes (child processes)', { timeout: 120_000 }, () => {
  it('keeps every acknowledged write when the writer is killed with SIGKILL mid-burst', async () => {
    const d = dir();
    // A small compact_bytes makes compactions run during the burst too.
    const child = spawnTs(CHILD, ['burst', d, '8192']);
    await child.waitUntil((out) => acked(out).length >= 600);
    child.proc.kill('SIGKILL');
    const { signal } = await child.exited;
    expect(signal).toBe('SIGKILL');
    const ids = acked(child.stdout());
    expect(ids.length).toBeGreaterThanOrEqual(600);
    const store = await open(d);
    expectConsistent(store, ids);
    // The directory stays usable: more writes, a clean close, a reopen.
    await store.transaction((tx) => {
      tx.col(Items).insert({ id: 'item_after', n: -1 });
      tx.col(Counters).put({ id: 'count', value: tx.col(Counters).get('count')!.value + 1 });
    });
    await store.close();
    const again = await open(d);
    expect(again.read.col(Items).get('item_after')).toBeDefined();
    expectConsistent(again, ids);
  });

  for (const step of ['rotated', 'snapshot-written'] as const) {
    it(`recovers from a crash during compaction (killed after: ${step})`, async () => {
      const d = dir();
      const child = spawnTs(CHILD, [`kill-at:${step}`, d]);
      const { signal } = await child.exited;
      expect(signal).toBe('SIGKILL');
      expect(child.stdout()).toContain('compacting');
      expect(child.stdout()).not.toContain('compacted');
      expect(existsSync(join(d, 'journal.old.jsonl'))).toBe(true);
      expect(existsSync(join(d, 'db.json'))).toBe(step === 'snapshot-written');
      const ids = acked(child.stdout());
      expect(ids.length).toBeGreaterThanOrEqual(200);
      const store = await open(d);
      expectConsistent(store, ids);
      // Start-up finishes the interrupted compaction.
      expect(existsSync(join(d, 'journal.old.jsonl'))).toBe(false);
      expect(existsSync(join(d, 'db.json'))).toBe(true);
    });
  }

  it('compaction keeps every write (tiny compact_bytes, many writes, reopen)', async () => {
    const d = dir();
    const store = await FileStore.open(d, { compactBytes: 2048 });
    const ids: string[] = [];
    for (let round = 0; round < 20; round++) {
      await Promise.all(
        Array.from({ length: 25 }, (_, i) => {
          const n = round * 25 + i;
          const id = `item_${String(n).padStart(8, '0')}`;
          ids.push(id);
          return store.transaction((tx) => {
            tx.col(Items).insert({ id, n, owner: `o${n % 7}` });
            tx.col(Counters).put({ id: 'count', value: (tx.col(Counters).get('count')?.value ?? 0) + 1 });
          });
        }),
      );
    }
    expect(existsSync(join(d, 'db.json'))).toBe(true); // compactions happened during the writes
    await store.close();
    expect(statSync(join(d, 'journal.jsonl')).size).toBe(0);
    const again = await open(d);
    expectConsistent(again, ids);
    expect(again.read.col(Items).ids('owner', 'o3')).toEqual(ids.filter((_, n) => n % 7 === 3));
  });

  it('compacts only once the journal outgrows the snapshot, so compaction work per write stays flat', async () => {
    const d = dir();
    const store = await open(d);
    await store.transaction((tx) => {
      for (let n = 0; n < 2000; n++) tx.col(Items).insert({ id: `item_${n}`, n, pad: 'p'.repeat(100) });
    });
    await store.close();
    const snapshotBytes = statSync(join(d, 'db.json')).size;
    const s2 = await FileStore.open(d, { compactBytes: 1024 });
    cleanups.push(() => s2.close());
    const before = readFileSync(join(d, 'db.json'), 'utf8');
    let n = 100_000;
    while (statSync(join(d, 'journal.jsonl')).size < snapshotBytes / 2) {
      await Promise.all(
        Array.from({ length: 100 }, () => s2.transaction((tx) => tx.col(Items).insert({ id: `item_${n}`, n: n++ }))),
      );
    }
    // The journal is far past compact_bytes but smaller than the snapshot: no compaction yet.
    expect(readFileSync(join(d, 'db.json'), 'utf8')).toBe(before);
  });

  it('a second process on the same directory fails with a clear message', async () => {
    const d = dir();
    const store = await open(d);
    const child = spawnTs(CHILD, ['open', d]);
    const { code } = await child.exited;
    expect(code).toBe(1);
    expect(child.stderr().trim()).toBe(
      `data directory ${d} is in use by another pinbot process (pid ${process.pid}). ` +
        `Stop that process, or pass --data DIR to use another directory.`,
    );
    expect(child.stdout()).toBe('');
    expect(store.read.col(Items).count()).toBe(0);
  });

  it('takes over a stale lock left by a dead process', async () => {
    const d = dir();
    const dead = spawnNode(['-e', '']);
    await dead.exited;
    writeFileSync(join(d, 'pinbot.lock'), `${dead.proc.pid}\n`);
    const child = spawnTs(CHILD, ['open', d]);
    const { code } = await child.exited;
    expect(child.stderr()).toBe('');
    expect(code).toBe(0);
    expect(child.stdout()).toBe('opened\n');
    expect(existsSync(join(d, 'pinbot.lock'))).toBe(false);
  });
});
