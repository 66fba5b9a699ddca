import { join } from 'node:path';
import { createScheduler } from '../clock/scheduler.js';
import { readTraces, type Trace } from '../runtime/index.js';
import { observeCommits } from '../store/core/commit-signal.js';
import type { Store } from '../store/core/types.js';
import { isBotName } from '../util/bot-name.js';
import { botTraceFile, DATA_DIR } from '../util/data-dir.js';
import { fileHostDeps } from './bot-deployment.js';
import type { Deployment, DeploymentOptions } from './deployment.js';
import { openFileStore } from './store-only.js';

/**
 * The traces of a bot from its history files under `stateDir` (`DATA/bots`; the bot need not
 * run): embedded and remote, newest `limit`, oldest first.
 */
export function tracesFromFiles(stateDir: string, name: string, limit: number): Trace[] | undefined {
  if (!isBotName(name)) return undefined;
  const local = readTraces(botTraceFile(stateDir, name, false), limit);
  const remote = readTraces(botTraceFile(stateDir, name, true), limit);
  const all = [...local, ...remote].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0)).slice(-limit);
  return all.length ? all : undefined;
}

/**
 * One process owns the data: the file store of `dataDir` (or the store given), rate limits in
 * memory, cron jobs here, bots' keys and traces as files (the default deployment).
 */
export async function fileDeployment(o: DeploymentOptions): Promise<Deployment> {
  const opened: Store = o.store ?? (await openFileStore({ ...o, warn: (msg) => o.log.warn(msg) }));
  const clock = typeof o.clock === 'function' ? o.clock(opened) : o.clock;
  const { store, commits } = observeCommits(opened, { cause: o.cause });
  const stateDir = join(o.dataDir, DATA_DIR.bots);
  return {
    driver: 'file',
    shared: false,
    store,
    commits,
    clock,
    scheduler: createScheduler(clock),
    botHostDeps: (b) => fileHostDeps({ ...b, store, commits }),
    storedTraces: async (name, limit) => tracesFromFiles(stateDir, name, limit),
    close: () => store.close(),
  };
}
