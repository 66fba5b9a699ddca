import { afterEach, describe, expect, it } from 'vitest';
import { pluginState, SHARED, StateFullError } from '../../src/plugin-api/state.js';
import { LimitError, PluginStates } from '../../src/runtime/index.js';
import { FileStore } from '../../src/store/file/file-store.js';
import { tempDir } from '../helpers/api.js';

/**
 * A plugin's state has a bound per plugin and bot — keys and bytes, `plugins.state` in
 * config.yaml — so no plugin can grow the store without end (issue 21, item 6). A write past it
 * is refused with what to do, and nothing is written; a write that does not grow it passes.
 */
let cleanup: (() => void) | undefined;
let store: FileStore | undefined;
afterEach(async () => {
  await store?.close();
  cleanup?.();
  store = cleanup = undefined;
});

let dir = '';
async function open(): Promise<FileStore> {
  const tmp = tempDir('pinbot-state-');
  cleanup = tmp.cleanup;
  dir = tmp.dir;
  return (store = await FileStore.open(tmp.dir));
}

describe('plugin state bounds', () => {
  it(
    'max_keys: a new key past it is refused, naming plugin, bot and setting; changing ' +
      'or deleting a key still works',
    async () => {
      const s = await open();
      const state = pluginState(s, 'karma', 'thanks-bot', undefined, { maxKeys: 2, maxBytes: 1_000_000 });
      await state.set('a', 1);
      await state.set('b', 2);
      const err = await state.set('c', 3).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StateFullError);
      // a guardrail: the step fails with reason limit, the plugin is not quarantined
      expect(err).toBeInstanceOf(LimitError);
      expect((err as Error).message).toBe(
        'state c: the state of plugin karma for bot thanks-bot is full: 2 keys, at most ' +
          '2 (plugins.state.max_keys); nothing was written — delete keys it no longer ' +
          'needs, or raise plugins.state.max_keys in config.yaml',
      );
      expect(await state.entries()).toEqual([
        ['a', 1],
        ['b', 2],
      ]);
      await state.update<number>('a', (n = 0) => n + 10);
      await state.delete('b');
      await state.set('c', 3);
      expect(await state.entries()).toEqual([
        ['a', 11],
        ['c', 3],
      ]);
      // another bot, and the state shared by every bot, have bounds of their own
      await pluginState(s, 'karma', 'other-bot', undefined, { maxKeys: 2, maxBytes: 1_000_000 }).set('x', 1);
      await pluginState(s, 'karma', SHARED, undefined, { maxKeys: 2, maxBytes: 1_000_000 }).set('x', 1);
    },
  );

  it(
    'max_bytes: a write that would pass it is refused and changes nothing; a smaller ' +
      'value passes; it survives a restart',
    async () => {
      const s = await open();
      const limits = { maxKeys: 100, maxBytes: 2048 };
      const state = pluginState(s, 'notes', '', undefined, limits);
      await state.set('one', 'x'.repeat(1000));
      await expect(state.set('two', 'y'.repeat(1100))).rejects.toThrow(
        new RegExp(
          String.raw`the state of plugin notes \(shared by every bot\) is full: 1005 ` +
            String.raw`bytes, and this write needs 1105 more; at most 2048 ` +
            String.raw`\(plugins\.state\.max_bytes\)`,
        ),
      );
      await expect(state.update('one', () => 'x'.repeat(3000))).rejects.toThrow(StateFullError);
      expect(await state.get('one')).toBe('x'.repeat(1000));
      await state.set('one', 'short');
      await state.set('two', 'y'.repeat(1100));
      expect(s.read.col(PluginStates).count()).toBe(2);
      await s.close();
      store = await FileStore.open(dir);
      await expect(pluginState(store, 'notes', '', undefined, limits).set('three', 'z'.repeat(1000))).rejects.toThrow(
        StateFullError,
      );
    },
  );
});
