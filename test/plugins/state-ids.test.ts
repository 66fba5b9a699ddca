import { afterEach, describe, expect, it } from 'vitest';
import { idOf, pluginState } from '../../src/plugin-api/state.js';
import { PluginStates } from '../../src/runtime/index.js';
import { FileStore } from '../../src/store/file/file-store.js';
import { unstorable } from '../../src/store/postgres/pg-commit.js';
import { tempDir } from '../helpers/api.js';

/**
 * The ids of plugin state records hold no NUL (PostgreSQL refuses it in text), never collide
 * whatever the key, and state written with the NUL ids before 0.4 is still read on the file
 * store — a write moves it to its new id.
 */
let cleanup: (() => void) | undefined;
let store: FileStore | undefined;
afterEach(async () => {
  await store?.close();
  cleanup?.();
  store = cleanup = undefined;
});

describe('plugin state ids', () => {
  it('are text PostgreSQL stores, one per key: separators, NUL, % and lone surrogates in keys are escaped', () => {
    const keys = ['a/b', 'a%002fb', 'a\u0000b', '%', 'x\ud800', 'x\udc00y', '😀', 'plain'];
    const ids = keys.map((k) => idOf('karma', 'thanks', k));
    expect(new Set(ids).size).toBe(keys.length);
    expect(ids[0]).toBe('karma/thanks/a%002fb');
    expect(ids[1]).toBe('karma/thanks/a%0025002fb');
    expect(ids[6]).toBe('karma/thanks/😀');
    expect(
      unstorable(
        ids.map((id) => ['plugin_state', id] as never),
        new Set(['plugin_state']),
      ),
    ).toBeUndefined();
    // the bot of shared state is '': no id of a bot's state looks like it
    expect(idOf('karma', '', 'x/y')).not.toBe(idOf('karma', 'x', 'y'));
  });

  it('state written with the old NUL ids is read, changed and deleted; a write moves it to its new id', async () => {
    const tmp = tempDir('pinbot-state-ids-');
    cleanup = tmp.cleanup;
    store = await FileStore.open(tmp.dir);
    await store.transaction((tx) => {
      for (const [key, value] of [
        ['ann', 3],
        ['bob', 5],
      ] as const)
        tx.col(PluginStates).put({ id: `karma\u0000thanks\u0000${key}`, plugin: 'karma', bot: 'thanks', key, value });
    });
    await store.close();
    store = await FileStore.open(tmp.dir); // from the journal, as after an upgrade
    const state = pluginState(store, 'karma', 'thanks');
    expect(await state.get('ann')).toBe(3);
    expect(await state.entries()).toEqual([
      ['ann', 3],
      ['bob', 5],
    ]);
    expect(await state.update<number>('ann', (n = 0) => n + 1)).toBe(4);
    const col = store.read.col(PluginStates);
    expect(col.get('karma\u0000thanks\u0000ann')).toBeUndefined();
    expect(col.get('karma/thanks/ann')).toMatchObject({ key: 'ann', value: 4 });
    expect(await state.delete('bob')).toBe(true);
    expect(col.get('karma\u0000thanks\u0000bob')).toBeUndefined();
    expect(await state.entries()).toEqual([['ann', 4]]);
  });
});
