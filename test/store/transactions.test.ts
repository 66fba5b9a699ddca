import { setFlagsFromString } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/core/memory-store.js';
import { ConstraintError } from '../../src/store/core/types.js';
import { deepFreeze } from '../../src/store/core/collection-state.js';
import { Counters, Items } from '../helpers/store-fixtures.js';

describe('store transactions (memory store)', () => {
  it('a throw undoes every change of the transaction, indexes included', async () => {
    const store = new MemoryStore();
    await store.transaction((tx) => {
      tx.col(Items).insert({ id: 'item_1', n: 1, owner: 'ann', tags: ['a', 'b'] });
      tx.col(Items).insert({ id: 'item_2', n: 2, owner: 'ann' });
      tx.col(Counters).put({ id: 'count', value: 2 });
    });
    await expect(
      store.transaction((tx) => {
        tx.col(Items).insert({ id: 'item_3', n: 3, owner: 'bob', tags: ['a'] });
        tx.col(Items).update('item_1', { owner: 'bob', tags: ['c'], n: 10 });
        tx.col(Items).delete('item_2');
        tx.col(Counters).put({ id: 'count', value: 99 });
        throw new Error('business rule says no');
      }),
    ).rejects.toThrow('business rule says no');
    const items = store.read.col(Items);
    expect(items.count()).toBe(2);
    expect(items.get('item_3')).toBeUndefined();
    expect(items.get('item_1')).toEqual({ id: 'item_1', n: 1, owner: 'ann', tags: ['a', 'b'] });
    expect(items.get('item_2')).toBeDefined();
    expect(items.ids('owner', 'ann')).toEqual(['item_1', 'item_2']);
    expect(items.ids('owner', 'bob')).toEqual([]);
    expect(items.ids('tag', 'a')).toEqual(['item_1']);
    expect(items.ids('tag', 'c')).toEqual([]);
    expect(items.one('n', '1')?.id).toBe('item_1');
    expect(items.one('n', '10')).toBeUndefined();
    expect(items.one('n', '3')).toBeUndefined();
    expect(store.read.col(Counters).get('count')?.value).toBe(2);
  });

  it('a unique-key clash or a duplicate id rejects the whole transaction', async () => {
    const store = new MemoryStore();
    await store.transaction((tx) => tx.col(Items).insert({ id: 'item_1', n: 1 }));
    await expect(
      store.transaction((tx) => {
        tx.col(Items).insert({ id: 'item_2', n: 2 });
        tx.col(Items).insert({ id: 'item_3', n: 1 });
      }),
    ).rejects.toBeInstanceOf(ConstraintError);
    await expect(store.transaction((tx) => tx.col(Items).insert({ id: 'item_1', n: 5 }))).rejects.toThrow(/exists/);
    expect(store.read.col(Items).count()).toBe(1);
    expect(store.read.col(Items).one('n', '2')).toBeUndefined();
  });

  it('multi indexes stay in ascending id order whatever the insertion order', async () => {
    const store = new MemoryStore();
    await store.transaction((tx) => {
      for (const id of ['item_c', 'item_a', 'item_d', 'item_b'])
        tx.col(Items).insert({ id, n: id.charCodeAt(5), owner: 'o' });
    });
    expect(store.read.col(Items).ids('owner', 'o')).toEqual(['item_a', 'item_b', 'item_c', 'item_d']);
    expect([...store.read.col(Items).keys('owner')]).toEqual(['o']);
  });

  it('records are deeply frozen, so state changes only through a transaction', async () => {
    const store = new MemoryStore();
    const tags = ['a'];
    const rec = await store.transaction((tx) => tx.col(Items).insert({ id: 'item_1', n: 1, tags }));
    expect(() => (rec as { n: number }).n++).toThrow(TypeError);
    expect(() => (store.read.col(Items).get('item_1')!.tags as string[]).push('b')).toThrow(TypeError);
    expect(store.read.col(Items).get('item_1')!.tags).toEqual(['a']);
  });

  it('freezes members at any depth, after flat ones, and ends on a cycle', () => {
    const flat = deepFreeze({ a: 1, b: 'x', c: null });
    expect(Object.isFrozen(flat)).toBe(true);
    const deep = deepFreeze({ n: 1, inner: { list: [{ x: [1, 2] }], s: 'y' } });
    expect(Object.isFrozen(deep.inner)).toBe(true);
    expect(Object.isFrozen(deep.inner.list)).toBe(true);
    expect(Object.isFrozen(deep.inner.list[0]!.x)).toBe(true);
    // a member that is an object after flat ones (the look before freezing must not stop short)
    const late = deepFreeze({ a: 1, b: 2, c: 3, last: { z: [3] } });
    expect(Object.isFrozen(late.last.z)).toBe(true);
    const cyclic: { self?: unknown; other: { back?: unknown } } = { other: {} };
    cyclic.self = cyclic;
    cyclic.other.back = cyclic;
    expect(deepFreeze(cyclic)).toBe(cyclic);
    expect(Object.isFrozen(cyclic.other)).toBe(true);
  });

  it('a frozen record is kept as it is, and what it holds is frozen too; an unfrozen one is copied', async () => {
    const store = new MemoryStore();
    const tags = ['a'];
    const frozen = Object.freeze({ id: 'item_1', n: 1, tags });
    const loose = { id: 'item_2', n: 2, tags: ['b'] };
    await store.transaction((tx) => {
      tx.col(Items).put(frozen);
      tx.col(Items).put(loose);
    });
    const items = store.read.col(Items);
    expect(items.get('item_1')).toBe(frozen);
    expect(Object.isFrozen(tags)).toBe(true);
    expect(() => tags.push('c')).toThrow(TypeError);
    expect(items.get('item_2')).not.toBe(loose);
    loose.n = 5; // the caller's object is not the store's
    expect(items.get('item_2')?.n).toBe(2);
    expect(items.ids('tag', 'a')).toEqual(['item_1']);
  });

  it('a stored copy is what a spread gives: own fields in order, `__proto__` a field, the id kept', async () => {
    const store = new MemoryStore();
    const proto = { inherited: 'not copied' };
    const given = Object.assign(Object.create(proto) as object, { id: 'item_1', n: 1, owner: 'ann' });
    Object.defineProperty(given, '__proto__', {
      value: 'a field',
      enumerable: true,
      writable: true,
      configurable: true,
    });
    await store.transaction((tx) => void tx.col(Items).insert(given as never));
    const items = store.read.col(Items);
    const stored = items.get('item_1')!;
    expect(Object.keys(stored)).toEqual(['id', 'n', 'owner', '__proto__']);
    expect(Object.getPrototypeOf(stored)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(stored, '__proto__')?.value).toBe('a field');
    expect('inherited' in stored).toBe(false);
    expect(Object.isFrozen(given)).toBe(false); // the caller's object is not the store's
    // an update: the record's fields in their order, the patch's new ones after; the id stays
    await store.transaction((tx) => void tx.col(Items).update('item_1', { pad: 'p', n: 2, id: 'item_9' }));
    const updated = items.get('item_1')!;
    expect(Object.keys(updated)).toEqual(['id', 'n', 'owner', '__proto__', 'pad']);
    expect(updated).toMatchObject({ id: 'item_1', n: 2, owner: 'ann', pad: 'p' });
    expect(items.get('item_9')).toBeUndefined();
    expect(JSON.stringify(updated)).toBe(JSON.stringify({ ...(stored as object), ...{ pad: 'p', n: 2 } }));
  });

  it('records written alike share one hidden class, frozen, once the engine runs optimised', async () => {
    // a copy by spread got a map of its own per object in optimised code (and its frozen form
    // another): one per stored record, megamorphic reads and old-generation garbage
    setFlagsFromString('--allow-natives-syntax');
    const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
    setFlagsFromString('--no-allow-natives-syntax');
    const store = new MemoryStore();
    const N = 5_000;
    // one transaction a record, as the API writes them
    for (let i = 0; i < N; i++)
      await store.transaction((tx) => void tx.col(Items).insert({ id: `i_${i}`, n: i, owner: 'ann' }));
    for (let i = 0; i < N; i++) await store.transaction((tx) => void tx.col(Counters).put({ id: `c_${i}`, value: i }));
    for (let i = 0; i < N; i++) await store.transaction((tx) => void tx.col(Counters).update(`c_${i}`, { value: -i }));
    let shared = 0;
    for (const col of [store.read.col(Items), store.read.col(Counters)]) {
      const ids = [...col.all()].map((r) => r.id).slice(-100);
      for (let i = 0; i < 99; i++) if (sameMap(col.get(ids[i]!)!, col.get(ids[i + 1]!)!)) shared++;
    }
    expect(shared).toBe(2 * 99);
  });

  it('refuses asynchronous and nested transactions', async () => {
    const store = new MemoryStore();
    await expect(
      store.transaction(async (tx) => {
        tx.col(Items).insert({ id: 'item_1', n: 1 });
      }),
    ).rejects.toThrow(/synchronous/);
    expect(store.read.col(Items).get('item_1')).toBeUndefined();
    let nested: Promise<unknown> | undefined;
    await store.transaction((tx) => {
      nested = store.transaction((inner) => inner.col(Items).insert({ id: 'item_3', n: 3 }));
      tx.col(Items).insert({ id: 'item_2', n: 2 });
    });
    await expect(nested).rejects.toThrow(/do not nest/);
    expect(store.read.col(Items).get('item_3')).toBeUndefined();
    expect(store.read.col(Items).get('item_2')).toBeDefined();
  });
});
