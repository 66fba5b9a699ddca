import { join } from 'node:path';
import {
  BotCursors,
  BotInbox,
  BotMemories,
  BotMetas,
  fencedStore,
  PluginStates,
  type BotPlacement,
  type BotStorage,
  type TraceArchive,
} from '../runtime/index.js';
import { FileStore } from '../store/file/file-store.js';
import type { CommitFeed } from '../store/core/commit-signal.js';
import type { Store } from '../store/core/types.js';
import { inboxFeed } from './inbox-feed.js';
import { COMMIT_ACK_HEADER, commitAckToken } from '../util/commit-ack.js';
import { botTraceFile } from '../util/data-dir.js';

/**
 * One process owns its bots (the file store, or `pinbot bots run`): embedded bots keep their
 * state in the server's store (`embedded`), bots of a remote server in a file store of their own
 * under `DATA/bots/remote` (opened on first use); every bot's traces are a file under
 * `stateDir` (`traces/NAME.jsonl`, `remote/traces/NAME.jsonl`).
 */
export function fileBotStorage({ embedded, stateDir }: { embedded?: Store; stateDir: string }): BotStorage {
  let remote: Promise<FileStore> | undefined;
  const openRemote = () =>
    (remote ??= FileStore.open(join(stateDir, 'remote'), {
      integrity: { collections: [BotMetas, BotCursors, BotInbox, PluginStates, BotMemories].map((c) => c.name) },
    }));
  const openEmbedded = async () => {
    if (!embedded) throw new Error('no embedded store: embedded bots run only inside `pinbot serve`');
    return embedded;
  };
  return {
    forBot: (name, o) => ({
      open: o.remote ? openRemote : openEmbedded,
      // the server's file store: the bot's writes and its requests' commits share one journal
      ordered: !o.remote,
      headers: !o.remote && embedded ? { [COMMIT_ACK_HEADER]: commitAckToken(embedded) } : undefined,
      traces: { file: botTraceFile(stateDir, name, o.remote) },
    }),
    async close() {
      if (remote) await (await remote).close();
      remote = undefined;
    },
  };
}

/**
 * Bots shared out between the processes on one database: every bot (embedded or remote) keeps
 * its state in the shared store, each write fenced by its lease (`placement`), so a process that
 * lost a bot never writes its state again; its traces are kept by `archive` (in the database, so
 * its history follows it); it hears of the pushes other processes queue in its inbox; and pushes
 * for bots that run elsewhere are queued in the shared store.
 */
export function sharedBotStorage({
  store,
  commits,
  placement,
  archive,
}: {
  store: Store;
  commits: CommitFeed;
  placement: BotPlacement;
  archive: (bot: string) => TraceArchive;
}): BotStorage {
  const inbox = inboxFeed(commits);
  return {
    forBot: (name) => ({
      open: async () => fencedStore(store, placement.fence(name)),
      traces: { archive: archive(name) },
      inbox,
    }),
    shared: async () => store,
    close: async () => undefined,
  };
}
