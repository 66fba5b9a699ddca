import { join } from 'node:path';
import { BotCursors, BotInbox, BotMetas, PluginStates, type StateStores } from '../runtime/index.js';
import { FileStore } from '../store/file/file-store.js';
import type { Store } from '../store/core/types.js';

/**
 * Where bots keep their state: embedded bots in the server's store (`embedded`), bots of a
 * remote server in a file store of their own under `DATA/bots/remote`, opened on first use.
 */
export function botStateStores({ embedded, stateDir }: { embedded?: Store; stateDir: string }): StateStores {
  let remote: Promise<FileStore> | undefined;
  return {
    async open(kind) {
      if (kind === 'embedded') {
        if (!embedded) throw new Error('no embedded store: embedded bots run only inside `pinbot serve`');
        return embedded;
      }
      remote ??= FileStore.open(join(stateDir, 'remote'), { integrity: { collections: [BotMetas, BotCursors, BotInbox, PluginStates].map((c) => c.name) } });
      return remote;
    },
    async close() {
      if (remote) await (await remote).close();
      remote = undefined;
    },
  };
}
