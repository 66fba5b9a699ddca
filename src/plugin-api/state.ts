import { type PluginStateRecord, PluginStates } from '../runtime/index.js';
import type { Store } from '../store/core/types.js';
import type { PluginState } from './types.js';

/** Largest value one key may hold (its JSON text). */
export const MAX_STATE_BYTES = 262_144;
/** Writes remembered per key, so a step run again after a crash does not apply its write twice. */
const APPLIED_KEEP = 32;

/** The bot of state shared by every bot (setup, teardown, jobs of setup). */
export const SHARED = '';

/** Internal. */
function checkKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > 200) throw new Error(`a state key is a string of 1 to 200 characters, not ${JSON.stringify(key)}`);
  return key;
}

/** A value as the store keeps it: JSON data, at most MAX_STATE_BYTES. Internal. */
function jsonValue(value: unknown, key: string): unknown {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new Error(`state ${key}: the value is not JSON data (${(err as Error).message})`);
  }
  if (text === undefined) throw new Error(`state ${key}: the value is not JSON data (${typeof value}); use delete to remove a key`);
  if (text.length > MAX_STATE_BYTES) throw new Error(`state ${key}: the value is ${Math.round(text.length / 1024)} KB; at most ${MAX_STATE_BYTES / 1024} KB per key`);
  return JSON.parse(text);
}

const idOf = (plugin: string, bot: string, key: string) => `${plugin}\u0000${bot}\u0000${key}`;

/**
 * The `ctx.state` of a plugin for one bot (or shared, bot `''`): records of the `plugin_state`
 * collection in `store` (the bot's state store: the server's own for embedded bots). Every write
 * is a store transaction, durable when it resolves. Inside an action, `stepKey` (the step's
 * Idempotency-Key) numbers each write of the step; a write already applied by an earlier run of
 * the same step (before a crash or a retried request) is not applied again.
 *
 * @example const state = pluginState(store, 'karma', 'thanks-bot'); await state.set('ABC123', 3);
 */
export function pluginState(store: Store, plugin: string, bot: string, stepKey?: string): PluginState {
  let writes = 0;
  const mark = () => (stepKey ? `${stepKey}#${++writes}` : undefined);
  const write = <T>(key: string, next: (cur: PluginStateRecord | undefined) => { value: unknown; out: T } | undefined, replay: (cur: PluginStateRecord) => T) => {
    const m = mark();
    return store.transaction((tx) => {
      const col = tx.col(PluginStates);
      const id = idOf(plugin, bot, key);
      const cur = col.get(id);
      if (m && cur?.applied?.includes(m)) return replay(cur);
      const change = next(cur);
      if (!change) return undefined as T;
      const applied = m ? [...(cur?.applied ?? []), m].slice(-APPLIED_KEEP) : cur?.applied;
      col.put({ id, plugin, bot, key, value: change.value, ...(applied ? { applied } : {}) });
      return change.out;
    });
  };
  return {
    async get<T>(key: string) {
      // the store freezes what it keeps: the caller gets a copy it may change
      return structuredClone(store.read.col(PluginStates).get(idOf(plugin, bot, checkKey(key)))?.value) as T | undefined;
    },
    async set(key, value) {
      const v = jsonValue(value, checkKey(key));
      await write(key, () => ({ value: v, out: undefined }), () => undefined);
    },
    async update<T>(key: string, fn: (current: T | undefined) => T): Promise<T> {
      checkKey(key);
      return write<T>(
        key,
        (cur) => {
          const next = fn(structuredClone(cur?.value) as T | undefined);
          if (next && typeof (next as { then?: unknown }).then === 'function') throw new Error(`state ${key}: update takes a synchronous function (it runs inside a store transaction)`);
          const v = jsonValue(next, key);
          return { value: v, out: structuredClone(v) as T };
        },
        (cur) => structuredClone(cur.value) as T,
      );
    },
    async delete(key) {
      checkKey(key);
      const m = mark();
      return store.transaction((tx) => {
        const col = tx.col(PluginStates);
        const id = idOf(plugin, bot, key);
        if (m && col.get(id)?.applied?.includes(m)) return true;
        return col.delete(id);
      });
    },
    async entries(prefix = '') {
      const col = store.read.col(PluginStates);
      return col
        .ids('scope', `${plugin}\u0000${bot}`)
        .map((id) => col.get(id)!)
        .filter((r) => r.key.startsWith(prefix))
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
        .map((r) => [r.key, structuredClone(r.value)] as [string, unknown]);
    },
  };
}
