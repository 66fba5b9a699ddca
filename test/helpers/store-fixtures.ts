import { defineCollection } from '../../src/store/core/types.js';

/** Collections of the store tests (not part of pinbot's schema). */
export interface Item {
  readonly id: string;
  readonly n: number;
  readonly pad?: string;
  readonly tags?: readonly string[];
  readonly owner?: string;
}
export const Items = defineCollection<Item>({
  name: 'items',
  unique: { n: (r) => String(r.n) },
  multi: { owner: (r) => r.owner, tag: (r) => r.tags },
});

export interface Counter {
  readonly id: string;
  readonly value: number;
}
export const Counters = defineCollection<Counter>({ name: 'counters' });
