import {
  appendFileSync,
  copyFileSync,
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileStore, SCHEMA_VERSION } from '../../src/store/file/file-store.js';
import { JournalCorruptError } from '../../src/store/file/journal.js';
import { DataDirLockedError } from '../../src/store/file/lock.js';
import { tempDir } from '../helpers/api.js';
import { Counters, Items } from '../helpers/store-fixtures.js';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function dir(): string {
  const t = tempDir('pinbot-store-');
  cleanups.push(t.cleanup);
  return t.dir;
}

async function open(d: string, opts: Parameters<typeof FileStore.open>[1] = {}): Promise<FileStore> {
  const store = await FileStore.open(d, { warn: () => undefined, ...opts });
  cleanups.push(() => store.close());
  return store;
}

async function addItems(store: FileStore, from: number, count: number): Promise<void> {
  await Promise.all(
    Array.from({ length: count }, (_, i) =>
      store.transaction((tx) => {
        tx.col(Items).insert({
          id: `item_${String(from + i).padStart(8, '0')}`,
          n: from + i,
          owner: `o${(from + i) % 3}`,
        });
        tx.col(Counters).put({ id: 'count', value: (tx.col(Counters).get('count')?.value ?? 0) + 1 });
      }),
    ),
  );
}

/** A copy of a live data directory is exactly what a crash at this instant leaves on disk. */
function crashImage(live: string): string {
  const d = dir();
  cpSync(live, d, { recursive: true });
  return d;
}

describe('file store', () => {
  it('keeps every committed write across a clean restart, with its indexes', async () => {
    const d = dir();
    const a = await FileStore.open(d);
    await addItems(a, 0, 50);
    await a.close();
    const snap = JSON.parse(readFileSync(join(d, 'db.json'), 'utf8'));
    expect(snap.schema_version).toBe(SCHEMA_VERSION);
    expect(snap.collections.items).toHaveLength(50);
    expect(statSync(join(d, 'journal.jsonl')).size).toBe(0);
    const b = await open(d);
    expect(b.read.col(Items).count()).toBe(50);
    expect(b.read.col(Counters).get('count')?.value).toBe(50);
    expect(b.read.col(Items).ids('owner', 'o1')).toHaveLength(17);
    expect(b.read.col(Items).one('n', '42')?.id).toBe('item_00000042');
  });

  it('a rolled-back transaction writes nothing to the journal', async () => {
    const d = dir();
    const store = await open(d);
    await addItems(store, 0, 1);
    const before = readFileSync(join(d, 'journal.jsonl'), 'utf8');
    await expect(
      store.transaction((tx) => {
        tx.col(Items).insert({ id: 'item_x', n: 999 });
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(readFileSync(join(d, 'journal.jsonl'), 'utf8')).toBe(before);
    expect(store.read.col(Items).get('item_x')).toBeUndefined();
  });

  it('replays the journal after a crash (no snapshot written)', async () => {
    const d = dir();
    const live = await open(d);
    await addItems(live, 0, 30);
    const image = crashImage(d);
    expect(existsSync(join(image, 'db.json'))).toBe(false);
    const store = await open(image);
    expect(store.read.col(Items).count()).toBe(30);
    expect(store.read.col(Counters).get('count')?.value).toBe(30);
  });

  it('drops a torn last line with a warning, keeps the rest, and goes on writing', async () => {
    const d = dir();
    const live = await open(d);
    await addItems(live, 0, 10);
    const image = crashImage(d);
    const journal = join(image, 'journal.jsonl');
    const good = statSync(journal).size;
    appendFileSync(journal, '{"s":11,"c":[["items","item_torn",{"id":"item_t');
    const warnings: string[] = [];
    const store = await FileStore.open(image, { warn: (m) => warnings.push(m) });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/journal\.jsonl:11: dropped a torn tail/);
    expect(statSync(journal).size).toBe(good);
    expect(store.read.col(Items).count()).toBe(10);
    await addItems(store, 10, 5);
    await store.close();
    const again = await open(image);
    expect(again.read.col(Items).count()).toBe(15);
  });

  it('drops a complete last line that lacks its newline (its write never finished)', async () => {
    const d = dir();
    const live = await open(d);
    await addItems(live, 0, 3);
    const image = crashImage(d);
    appendFileSync(
      join(image, 'journal.jsonl'),
      JSON.stringify({ s: 4, c: [['items', 'item_late', { id: 'item_late', n: 77 }]] }),
    );
    const warnings: string[] = [];
    const store = await FileStore.open(image, { warn: (m) => warnings.push(m) });
    cleanups.push(() => store.close());
    expect(warnings).toHaveLength(1);
    expect(store.read.col(Items).get('item_late')).toBeUndefined();
    await addItems(store, 3, 1); // must start on a fresh line
    expect(
      readFileSync(join(image, 'journal.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .every((l) => JSON.parse(l)),
    ).toBe(true);
  });

  it('drops a tail of zeros (a crash after the size grew but before the data landed)', async () => {
    const d = dir();
    const live = await open(d);
    await addItems(live, 0, 3);
    const image = crashImage(d);
    appendFileSync(join(image, 'journal.jsonl'), Buffer.alloc(300));
    const store = await open(image);
    expect(store.read.col(Items).count()).toBe(3);
  });

  it('refuses to start on damage in the middle of the journal, saying what to do', async () => {
    const d = dir();
    const live = await open(d);
    await addItems(live, 0, 5);
    const image = crashImage(d);
    const journal = join(image, 'journal.jsonl');
    const lines = readFileSync(journal, 'utf8').split('\n');
    lines[2] = lines[2]!.slice(0, 20);
    writeFileSync(journal, lines.join('\n'));
    const err = await FileStore.open(image).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JournalCorruptError);
    expect((err as Error).message).toMatch(
      new RegExp(
        String.raw`journal\.jsonl:3: unreadable line, and later lines are ` +
          String.raw`intact.*Start-up refused .*Restore the data directory from a backup`,
      ),
    );
  });

  it('a second open of the same directory fails with a clear message until the first closes', async () => {
    const d = dir();
    const first = await FileStore.open(d);
    const err = await FileStore.open(d).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataDirLockedError);
    expect((err as Error).message).toMatch(/already open in this process/);
    await first.close();
    const second = await open(d);
    expect(second.read.col(Items).count()).toBe(0);
  });

  it('refuses a snapshot of another schema version', async () => {
    const d = dir();
    writeFileSync(join(d, 'db.json'), JSON.stringify({ schema_version: 99, seq: 0, collections: {} }));
    await expect(FileStore.open(d)).rejects.toThrow(
      new RegExp(
        String.raw`db\.json holds data format 99, written by a newer pinbot; this one ` +
          String.raw`reads formats up to 2\. Install the newer pinbot again`,
      ),
    );
    expect(existsSync(join(d, 'pinbot.lock'))).toBe(false);
  });

  it('reads a snapshot edited by hand (any JSON layout) and says so when it is not JSON', async () => {
    const d = dir();
    const snap = { schema_version: 1, seq: 1, collections: { items: [{ id: 'item_a', n: 1 }] } };
    writeFileSync(join(d, 'db.json'), JSON.stringify(snap, null, 2));
    const store = await FileStore.open(d);
    expect(store.read.col(Items).get('item_a')).toEqual({ id: 'item_a', n: 1 });
    await store.close();
    writeFileSync(join(d, 'db.json'), '{"schema_version":1,');
    await expect(FileStore.open(d)).rejects.toThrow(/db\.json cannot be read .*Restore it from a backup/);
  });

  it('durable() waits for the journal fsync of every transaction committed so far', async () => {
    const d = dir();
    const store = await open(d);
    const events: string[] = [];
    const write = store
      .transaction((tx) => tx.col(Items).insert({ id: 'item_1', n: 1 }))
      .then(() => events.push('write acked'));
    await store.durable().then(() => events.push('durable'));
    await write;
    expect(events).toEqual(['write acked', 'durable']);
    expect(readFileSync(join(d, 'journal.jsonl'), 'utf8')).toContain('item_1');
  });

  it(
    'a copy taken while running — db.json, the old journals, journal.jsonl, again if a ' +
      'snapshot was written meanwhile — always restores',
    async () => {
      const d = dir();
      const store = await open(d, { compactBytes: 4096 });
      let n = 0;
      const burst = () => addItems(store, (n += 7) - 7, 7);
      /** What a compaction changes: db.json's inode, the set of old journals (docs/operations.md, "Backups"). */
      const listing = () =>
        readdirSync(d)
          .filter((f) => f === 'db.json' || /^journal\.old/.test(f))
          .map((f) => `${f}:${statSync(join(d, f)).ino}`)
          .sort()
          .join(' ');
      let retried = 0;
      for (let round = 0; round < 15; round++) {
        let copy: string;
        for (let attempt = 0; ; attempt++) {
          copy = dir();
          const before = listing();
          // Writes and compactions keep running between the copies of the files (on a retry,
          // a write that triggers no compaction: compactions are rare in real life).
          const busy = attempt === 0 ? burst : () => addItems(store, (n += 1) - 1, 1);
          if (existsSync(join(d, 'db.json'))) copyFileSync(join(d, 'db.json'), join(copy, 'db.json'));
          await busy();
          if (round % 3 === 0 && attempt === 0) await Promise.all([store.compact(), burst()]);
          for (const f of readdirSync(d).filter((f) => /^journal\.old/.test(f)))
            copyFileSync(join(d, f), join(copy, f));
          await busy();
          copyFileSync(join(d, 'journal.jsonl'), join(copy, 'journal.jsonl'));
          if (listing() === before) break;
          retried++;
          if (attempt > 20) throw new Error('a compaction ran during every copy');
        }
        const restored = await open(copy);
        const items = restored.read.col(Items);
        expect(restored.read.col(Counters).get('count')?.value ?? 0).toBe(items.count());
        for (let i = 0; i < items.count(); i++)
          expect(items.one('n', String(i)), `round ${round}, item ${i}`).toBeDefined();
        await restored.close();
      }
      expect(retried).toBeGreaterThan(0); // the check had something to catch
    },
  );
});

describe('isDurable: whether a read has anything to wait for', () => {
  it('is false from the moment a write is visible until its journal line is fsynced, true after', async () => {
    const store = await open(dir());
    expect(store.isDurable()).toBe(true);
    const write = addItems(store, 0, 3);
    // the writes are visible to reads at once, but not durable yet: a read must wait for them
    expect(store.read.col(Items).count()).toBe(3);
    expect(store.isDurable()).toBe(false);
    await write;
    expect(store.isDurable()).toBe(true);
    await store.durable();
  });

  it('a transaction that throws leaves nothing to wait for', async () => {
    const store = await open(dir());
    // a transaction whose function throws never reaches the journal
    await expect(
      store.transaction(() => {
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(store.isDurable()).toBe(true);
  });
});
