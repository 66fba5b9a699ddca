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
