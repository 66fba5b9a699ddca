import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileStore } from '../../src/store/file/file-store.js';
import { MemoryStore } from '../../src/store/core/memory-store.js';
import { defineCollection, type Store } from '../../src/store/core/types.js';
import { newId } from '../../src/util/ids.js';

interface Item {
  id: string;
  code?: string;
  owner: string;
  tags: string[];
}
const Items = defineCollection<Item>({
  name: 'items',
  unique: { code: (i) => i.code },
  multi: { owner: (i) => i.owner, tag: (i) => i.tags },
});

const state = (db: Store['read']) => ({
  codeA: db.col(Items).one('code', 'A')?.id,
  codeB: db.col(Items).one('code', 'B')?.id,
  ann: [...db.col(Items).ids('owner', 'ann')],
  bob: [...db.col(Items).ids('owner', 'bob')],
  red: [...db.col(Items).ids('tag', 'red')],
  blue: [...db.col(Items).ids('tag', 'blue')],
});

describe('store indexes follow inserts, updates, deletes and rollbacks', () => {
  it('moves a record between keys only when its keys change', async () => {
    const store = new MemoryStore();
    await store.transaction((tx) => {
      const c = tx.col(Items);
      c.insert({ id: 'i3', code: 'A', owner: 'ann', tags: ['red'] });
      c.insert({ id: 'i1', owner: 'ann', tags: ['red', 'blue'] });
      c.insert({ id: 'i2', owner: 'bob', tags: [] });
    });
    expect(state(store.read)).toEqual({
      codeA: 'i3',
      codeB: undefined,
      ann: ['i1', 'i3'],
      bob: ['i2'],
      red: ['i1', 'i3'],
      blue: ['i1'],
    });
    // Same keys (a new but equal tags array): nothing moves.
    await store.transaction((tx) => tx.col(Items).update('i1', { tags: ['red', 'blue'] }));
    expect(state(store.read)).toMatchObject({ ann: ['i1', 'i3'], red: ['i1', 'i3'], blue: ['i1'] });
    // Changed keys: out of the old lists, into the new ones, still ascending.
    await store.transaction((tx) => {
      tx.col(Items).update('i3', { code: 'B', owner: 'bob', tags: ['blue'] });
      tx.col(Items).update('i1', { tags: ['blue'] });
    });
    expect(state(store.read)).toEqual({
      codeA: undefined,
      codeB: 'i3',
      ann: ['i1'],
      bob: ['i2', 'i3'],
      red: [],
      blue: ['i1', 'i3'],
    });
    await store.transaction((tx) => tx.col(Items).delete('i3'));
    expect(state(store.read)).toEqual({
      codeA: undefined,
      codeB: undefined,
      ann: ['i1'],
      bob: ['i2'],
      red: [],
      blue: ['i1'],
    });
  });

  it('restores every index when a transaction throws', async () => {
    const store = new MemoryStore();
    await store.transaction((tx) => tx.col(Items).insert({ id: 'i1', code: 'A', owner: 'ann', tags: ['red'] }));
    const before = state(store.read);
    await expect(
      store.transaction((tx) => {
        tx.col(Items).update('i1', { code: 'B', owner: 'bob', tags: ['blue'] });
        tx.col(Items).insert({ id: 'i2', code: 'A', owner: 'ann', tags: ['red'] });
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(state(store.read)).toEqual(before);
  });

  it('refuses a unique key held by another record', async () => {
    const store = new MemoryStore();
    await store.transaction((tx) => tx.col(Items).insert({ id: 'i1', code: 'A', owner: 'ann', tags: [] }));
    await expect(
      store.transaction((tx) => tx.col(Items).insert({ id: 'i2', code: 'A', owner: 'bob', tags: [] })),
    ).rejects.toThrow(/code "A" is taken/);
    await expect(
      store.transaction((tx) => tx.col(Items).update('i1', { code: 'A', owner: 'bob' })),
    ).resolves.toBeDefined();
  });

  it('keeps id lists ascending and without repeats when ids come in any order (hash ids)', async () => {
    // ids that do not sort by time, as idempotency records' (idem_<sha>) do: random order of
    // inserts, deletes, key moves, repeated keys in one record and rolled-back transactions,
    // each list read between the steps and checked against a plain model
    const store = new MemoryStore();
    const model = new Map<string, Item>();
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const owners = ['ann', 'bob'];
    const tags = ['red', 'blue', 'green'];
    const expected = (pick: (i: Item) => string[], key: string) =>
      [...model.values()]
        .filter((i) => pick(i).includes(key))
        .map((i) => i.id)
        .sort();
    for (let step = 0; step < 600; step++) {
      const id = `idem_${(rnd(1 << 30) * 7919).toString(16).padStart(10, '0').slice(0, 6)}`;
      const item: Item = { id, owner: owners[rnd(2)]!, tags: [tags[rnd(3)]!, tags[rnd(3)]!] };
      const existing = [...model.keys()];
      const victim = existing.length > 0 ? existing[rnd(existing.length)]! : undefined;
      const kind = rnd(10);
      if (kind < 5 && !model.has(id)) {
        await store.transaction((tx) => tx.col(Items).insert(item));
        model.set(id, item);
      } else if (kind < 7 && victim) {
        await store.transaction((tx) => tx.col(Items).delete(victim));
        model.delete(victim);
      } else if (kind < 9 && victim) {
        const moved = { ...model.get(victim)!, owner: item.owner, tags: item.tags };
        await store.transaction((tx) => tx.col(Items).update(victim, { owner: moved.owner, tags: moved.tags }));
        model.set(victim, moved);
      } else {
        await expect(
          store.transaction((tx) => {
            if (!model.has(id)) tx.col(Items).insert(item);
            if (victim) tx.col(Items).delete(victim);
            throw new Error('rolled back');
          }),
        ).rejects.toThrow('rolled back');
      }
      if (step % 3 === 0) {
        const key = step % 2 === 0 ? owners[rnd(2)]! : tags[rnd(3)]!;
        const pick = owners.includes(key) ? (i: Item) => [i.owner] : (i: Item) => i.tags;
        const index = owners.includes(key) ? 'owner' : 'tag';
        expect([...store.read.col(Items).ids(index, key)], `step ${step}, ${index} ${key}`).toEqual(
          expected(pick, key),
        );
      }
    }
    for (const o of owners) expect([...store.read.col(Items).ids('owner', o)]).toEqual(expected((i) => [i.owner], o));
    for (const t of tags) expect([...store.read.col(Items).ids('tag', t)]).toEqual(expected((i) => i.tags, t));
    const keysNow = [...store.read.col(Items).keys('tag')].sort();
    expect(keysNow).toEqual(tags.filter((t) => expected((i) => i.tags, t).length > 0).sort());
  });
});

describe('a reopened file store rebuilds its indexes from snapshot and journal', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('answers the same lookups after close (snapshot) and after a crash (journal only)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pinbot-idx-'));
    dirs.push(dir);
    let store = await FileStore.open(dir);
    await store.transaction((tx) => {
      tx.col(Items).insert({ id: 'i2', code: 'A', owner: 'ann', tags: ['red'] });
      tx.col(Items).insert({ id: 'i1', owner: 'ann', tags: ['red', 'blue'] });
    });
    await store.close();
    store = await FileStore.open(dir);
    await store.transaction((tx) => tx.col(Items).update('i2', { owner: 'bob' }));
    const expected = state(store.read);
    expect(expected).toEqual({
      codeA: 'i2',
      codeB: undefined,
      ann: ['i1'],
      bob: ['i2'],
      red: ['i1', 'i2'],
      blue: ['i1'],
    });
    // A copy of the live directory is what a crash leaves: no snapshot of the update, only the journal.
    const image = mkdtempSync(join(tmpdir(), 'pinbot-idx-crash-'));
    dirs.push(image);
    cpSync(dir, image, { recursive: true });
    const again = await FileStore.open(image);
    expect(state(again.read)).toEqual(expected);
    await again.close();
    await store.close();
  });

  it('keeps new ids after the loaded ones, ignoring ids that carry no time (idem_<sha>)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pinbot-ids-'));
    dirs.push(dir);
    const Notes = defineCollection<{ id: string }>({ name: 'notes' });
    const Hashed = defineCollection<{ id: string }>({ name: 'hashed' });
    const store = await FileStore.open(dir);
    const last = newId('note');
    await store.transaction((tx) => {
      tx.col(Notes).insert({ id: last });
      tx.col(Hashed).insert({ id: `idem_${'f'.repeat(64)}` });
    });
    await store.close();
    const again = await FileStore.open(dir);
    const next = newId('note');
    expect(next > last).toBe(true);
    // The time part (first 9 base32 digits) is now, not a time read out of the hash.
    const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
    const ms = [...next.slice(5, 14)].reduce((t, ch) => t * 32 + alphabet.indexOf(ch), 0);
    expect(Math.abs(ms - Date.now())).toBeLessThan(60_000);
    await again.close();
  });
});
