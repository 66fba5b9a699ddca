import { LimitError, type PluginStateRecord, PluginStates } from '../runtime/index.js';
import type { Store } from '../store/core/types.js';
import type { PluginState } from './types.js';

/** Largest value one key may hold (its JSON text). */
export const MAX_STATE_BYTES = 262_144;
/** Keys a plugin may keep per bot by default (`plugins.state.max_keys`). */
export const STATE_MAX_KEYS = 10_000;
/** Bytes (JSON of keys and values) a plugin may keep per bot by default (`plugins.state.max_bytes`). */
export const STATE_MAX_TOTAL_BYTES = 16_777_216;

/** The bound of a plugin's state per bot (config.yaml `plugins.state`). */
export interface StateLimits {
  maxKeys: number;
  maxBytes: number;
}

/**
 * A write refused because the plugin's state for this bot is full. A guardrail, not the
 * plugin's failure (it passes through the boundary like a wallet limit: the step fails with
 * it, the plugin is not quarantined); nothing is written.
 */
export class StateFullError extends LimitError {
  constructor(message: string) {
    super(message);
    this.name = 'StateFullError';
  }
}

/** Writes remembered per key, so a step run again after a crash does not apply its write twice. */
const APPLIED_KEEP = 32;

/** The bot of state shared by every bot (setup, teardown, jobs of setup). */
export const SHARED = '';

/** Internal. */
function checkKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > 200)
    throw new Error(`a state key is a string of 1 to 200 characters, not ${JSON.stringify(key)}`);
  return key;
}

/** A value as the store keeps it: JSON data, at most MAX_STATE_BYTES, and its size. Internal. */
function jsonValue(value: unknown, key: string): { value: unknown; bytes: number } {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new Error(`state ${key}: the value is not JSON data (${(err as Error).message})`);
  }
  if (text === undefined)
    throw new Error(`state ${key}: the value is not JSON data (${typeof value}); use delete to remove a key`);
  if (text.length > MAX_STATE_BYTES)
    throw new Error(
      `state ${key}: the value is ${Math.round(text.length / 1024)} KB; at most ${MAX_STATE_BYTES / 1024} KB per key`,
    );
  return { value: JSON.parse(text), bytes: Buffer.byteLength(key) + Buffer.byteLength(text) };
}

/** What a record counts against max_bytes (records written before the bound carry no size). Internal. */
const sizeOf = (r: PluginStateRecord) =>
  r.bytes ?? Buffer.byteLength(r.key) + Buffer.byteLength(JSON.stringify(r.value) ?? '');

/**
 * The escapes of a key in a record id: `%`, `/`, NUL and lone surrogates become `%XXXX` (hex
 * UTF-16 code), so an id is text PostgreSQL stores, and two keys never share one. Internal.
 */
const ESCAPED = /[%/\u0000]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const escapeKey = (key: string) => key.replace(ESCAPED, (c) => `%${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * The id of a plugin's key for a bot: `plugin/bot/key` (plugin and bot names hold no `/`, see
 * util/bot-name.ts; the key escaped). State written before 0.4 used NUL separators, which
 * PostgreSQL refuses in text: those ids (`legacyIdOf`) are still read on the file store, and
 * a write moves the record to its new id.
 *
 * @example idOf('karma', 'thanks', 'a/b') // 'karma/thanks/a%002fb'
 */
export const idOf = (plugin: string, bot: string, key: string) => `${plugin}/${bot}/${escapeKey(key)}`;
const legacyIdOf = (plugin: string, bot: string, key: string) => `${plugin}\u0000${bot}\u0000${key}`;

/** A key's record, under its id or (state written before 0.4) its legacy id. Internal. */
function recordOf(
  col: { get(id: string): PluginStateRecord | undefined },
  plugin: string,
  bot: string,
  key: string,
): PluginStateRecord | undefined {
  return col.get(idOf(plugin, bot, key)) ?? col.get(legacyIdOf(plugin, bot, key));
}

/** Refuses a write that would pass the bound; a write that does not grow the state always passes. Internal. */
function checkRoom(
  o: { plugin: string; bot: string; whose: string; limits: StateLimits },
  col: { ids(index: string, key: string): readonly string[]; get(id: string): PluginStateRecord | undefined },
  key: string,
  cur: PluginStateRecord | undefined,
  bytes: number,
): void {
  const { whose, limits } = o;
  const ids = col.ids('scope', `${o.plugin}\u0000${o.bot}`);
  if (!cur && ids.length >= limits.maxKeys) {
    throw new StateFullError(
      `state ${key}: the state of ${whose} is full: ${ids.length} keys, at most ` +
        `${limits.maxKeys} (plugins.state.max_keys); nothing was written — delete ` +
        `keys it no longer needs, or raise plugins.state.max_keys in config.yaml`,
    );
  }
  const before = cur ? sizeOf(cur) : 0;
  if (bytes <= before) return;
  let total = 0;
  for (const id of ids) total += sizeOf(col.get(id)!);
  if (total - before + bytes > limits.maxBytes) {
    throw new StateFullError(
      `state ${key}: the state of ${whose} is full: ${total} bytes, and this write ` +
        `needs ${bytes - before} more; at most ${limits.maxBytes} ` +
        `(plugins.state.max_bytes); nothing was written — delete keys it no longer ` +
        `needs, or raise plugins.state.max_bytes in config.yaml`,
    );
  }
}

/**
 * The `ctx.state` of a plugin for one bot (or shared, bot `''`): records of the `plugin_state`
 * collection in `store` (the bot's state store: the server's own for embedded bots). Every write
 * is a store transaction, durable when it resolves. Inside an action, `stepKey` (the step's
 * Idempotency-Key) numbers each write of the step; a write already applied by an earlier run of
 * the same step (before a crash or a retried request) is not applied again.
 *
 * @example const state = pluginState(store, 'karma', 'thanks-bot'); await state.set('ABC123', 3);
 */
export function pluginState(
  store: Store,
  plugin: string,
  bot: string,
  stepKey?: string,
  limits: StateLimits = { maxKeys: STATE_MAX_KEYS, maxBytes: STATE_MAX_TOTAL_BYTES },
): PluginState {
  let writes = 0;
  const mark = () => (stepKey ? `${stepKey}#${++writes}` : undefined);
  const whose = bot === SHARED ? `plugin ${plugin} (shared by every bot)` : `plugin ${plugin} for bot ${bot}`;
  const write = <T>(
    key: string,
    next: (cur: PluginStateRecord | undefined) => { value: unknown; bytes: number; out: T } | undefined,
    replay: (cur: PluginStateRecord) => T,
  ) => {
    const m = mark();
    return store.transaction((tx) => {
      const col = tx.col(PluginStates);
      const id = idOf(plugin, bot, key);
      const cur = recordOf(col, plugin, bot, key);
      if (m && cur?.applied?.includes(m)) return replay(cur);
      const change = next(cur);
      if (!change) return undefined as T;
      checkRoom({ plugin, bot, whose, limits }, col, key, cur, change.bytes);
      // a record under its legacy id moves to its id
      if (cur && cur.id !== id) col.delete(cur.id);
      const applied = m ? [...(cur?.applied ?? []), m].slice(-APPLIED_KEEP) : cur?.applied;
      col.put({ id, plugin, bot, key, value: change.value, bytes: change.bytes, ...(applied ? { applied } : {}) });
      return change.out;
    });
  };
  return {
    async get<T>(key: string) {
      // the store freezes what it keeps: the caller gets a copy it may change
      return structuredClone(recordOf(store.read.col(PluginStates), plugin, bot, checkKey(key))?.value) as
        | T
        | undefined;
    },
    async set(key, value) {
      const v = jsonValue(value, checkKey(key));
      await write(
        key,
        () => ({ ...v, out: undefined }),
        () => undefined,
      );
    },
    async update<T>(key: string, fn: (current: T | undefined) => T): Promise<T> {
      checkKey(key);
      return write<T>(
        key,
        (cur) => {
          const next = fn(structuredClone(cur?.value) as T | undefined);
          if (next && typeof (next as { then?: unknown }).then === 'function')
            throw new Error(`state ${key}: update takes a synchronous function (it runs inside a store transaction)`);
          const v = jsonValue(next, key);
          return { ...v, out: structuredClone(v.value) as T };
        },
        (cur) => structuredClone(cur.value) as T,
      );
    },
    async delete(key) {
      checkKey(key);
      const m = mark();
      return store.transaction((tx) => {
        const col = tx.col(PluginStates);
        const cur = recordOf(col, plugin, bot, key);
        if (m && cur?.applied?.includes(m)) return true;
        return cur ? col.delete(cur.id) : false;
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
