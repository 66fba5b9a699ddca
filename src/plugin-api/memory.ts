import type { ActionRunContext, MemoryWhose } from '../runtime/index.js';
import type { Json, Memory } from './types.js';

/**
 * `ctx.memory` (the event's person) or `ctx.conversationMemory` of an action call: the same
 * memory the bot's rules read as `memory.KEY` and write with `remember`, bounded by the bot's
 * `memory:` options. Each write is durable when it resolves and numbered within the step, so a
 * step run again after a crash does not apply its writes twice.
 *
 * @example const n = ((await ctx.memory.get<number>('visits')) ?? 0) + 1; await ctx.memory.set('visits', n);
 */
export function pluginMemory(plugin: string, rt: ActionRunContext, whose: MemoryWhose, next: () => number): Memory {
  const m = rt.memory;
  const subject = whose === 'person' ? m?.person : m?.conversation;
  const need = () => {
    if (!m || !subject) {
      throw new Error(
        whose === 'person'
          ? `plugin ${plugin}: ${rt.trigger.name} events are about no person, so ctx.memory has nothing to read ` +
              'or write (check ctx.memory.subject)'
          : `plugin ${plugin}: ${rt.trigger.name} events are in no conversation, so ctx.conversationMemory has ` +
              'nothing to read or write (check ctx.conversationMemory.subject)',
      );
    }
    return m;
  };
  const mark = () => `${rt.idempotencyKey}#m${next()}`;
  return {
    subject,
    async get<T = Json>(key: string) {
      return need().read(whose)[key] as T | undefined;
    },
    async set(key, value) {
      await need().apply([{ in: whose, set: { [key]: value } }], mark());
    },
    async delete(key) {
      const had = Object.hasOwn(need().read(whose), key);
      await need().apply([{ in: whose, forget: [key] }], mark());
      return had;
    },
    async entries() {
      return need().read(whose) as Record<string, Json>;
    },
  };
}
