import type { BotEvent } from './types.js';

/**
 * The order events are handled in: server time, oldest first; ties by key (ids are
 * time-sortable). Sources sort what one poll found with it, and the bot runner what several
 * sources found together.
 */
export function byServerTime(a: Omit<BotEvent, 'at'>, b: Omit<BotEvent, 'at'>): number {
  return (a.ts ?? 0) - (b.ts ?? 0) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}
