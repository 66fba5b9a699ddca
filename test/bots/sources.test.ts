import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock/clock.js';
import { pendingSource } from '../../src/runtime/builtins/sources/pending.js';
import { watchSource } from '../../src/runtime/builtins/sources/watch.js';
import type { SourceContext } from '../../src/runtime/contract/types.js';

interface Item {
  id: string;
  status: 'pending' | 'accepted' | 'declined';
  mine: boolean;
}

/** A newest-first list served in pages of `size`. */
function lister(items: () => Item[], size = 2) {
  let calls = 0;
  return {
    calls: () => calls,
    page: async (_ctx: SourceContext, before: string | undefined) => {
      calls++;
      const all = [...items()]
        .sort((a, b) => (a.id < b.id ? 1 : -1))
        .filter((i) => before === undefined || i.id < before);
      return { items: all.slice(0, size), has_more: all.length > size };
    },
  };
}

const ctx = { log: pino({ level: 'silent' }), clock: systemClock } as unknown as SourceContext;

describe('watch source (outgoing transfers, introductions)', () => {
  it('takes a baseline, then reports items settled since — new ones and old open ones — exactly once', async () => {
    let items: Item[] = [
      { id: 'a1', status: 'accepted', mine: true },
      { id: 'a2', status: 'pending', mine: true },
      { id: 'a3', status: 'pending', mine: false },
      { id: 'a4', status: 'declined', mine: true },
    ];
    const l = lister(() => items);
    const src = watchSource<Item>({
      name: 'w',
      description: '',
      page: l.page,
      relevant: (i) => i.mine,
      isOpen: (i) => i.status === 'pending',
      event: (i) => ({ key: `${i.status}:${i.id}`, type: `x.${i.status}`, payload: { id: i.id } }),
    });
    let r = await src.poll(ctx, undefined);
    expect(r.events).toEqual([]);
    expect(r.cursor).toEqual({ newest: 'a4', open: ['a2'] });
    // a2 (old, open) gets accepted; a5 appears and is declined before the next poll; a6 is new and pending
    items = [
      ...items.map((i) => (i.id === 'a2' ? { ...i, status: 'accepted' as const } : i)),
      { id: 'a5', status: 'declined', mine: true },
      { id: 'a6', status: 'pending', mine: true },
    ];
    r = await src.poll(ctx, r.cursor);
    expect(r.events.map((e) => e.key)).toEqual(['accepted:a2', 'declined:a5']);
    expect(r.cursor).toEqual({ newest: 'a6', open: ['a6'] });
    r = await src.poll(ctx, r.cursor);
    expect(r.events).toEqual([]);
  });

  it('stops paging once it is past the last newest id and has found every open item', async () => {
    const items: Item[] = Array.from({ length: 20 }, (_, i) => ({
      id: `b${String(i).padStart(2, '0')}`,
      status: 'accepted',
      mine: true,
    }));
    const l = lister(() => items);
    const src = watchSource<Item>({
      name: 'w',
      description: '',
      page: l.page,
      relevant: () => true,
      isOpen: (i) => i.status === 'pending',
      event: () => undefined,
    });
    const r = await src.poll(ctx, { newest: 'b19', open: [] });
    expect(l.calls()).toBe(1);
    expect(r.cursor).toEqual({ newest: 'b19', open: [] });
  });
});

describe('pending source (transfers, requests awaiting an answer)', () => {
  it(
    'raises each pending item once, including those pending at the first poll, and ' + 'forgets answered ones',
    async () => {
      let list = [{ id: 'p1' }, { id: 'p2' }];
      const src = pendingSource({ name: 'p', description: '', type: 'thing.received', list: async () => list });
      let r = await src.poll(ctx, undefined);
      expect(r.events.map((e) => e.key)).toEqual(['thing.received:p1', 'thing.received:p2']);
      list = [{ id: 'p2' }, { id: 'p3' }];
      r = await src.poll(ctx, r.cursor);
      expect(r.events.map((e) => e.key)).toEqual(['thing.received:p3']);
      expect(r.cursor).toEqual({ seen: ['p2', 'p3'] });
    },
  );
});
