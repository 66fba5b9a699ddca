import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { runAdminCommand, type AdminArgs } from '../admin/commands.js';
import { callAdmin, socketPath } from '../admin/socket.js';
import { loadConfig } from '../config/load.js';
import { systemClock } from '../domain/clock/clock.js';
import { FileStore } from '../store/file-store.js';
import { lockHolder } from '../store/lock.js';

export interface CommonOptions {
  data: string;
  config: string;
}

/**
 * Runs an operator command on a data directory: through the admin socket when a server holds
 * the directory, otherwise by opening the store itself (under its lock).
 */
export async function runOnDataDir(opts: CommonOptions, cmd: string, args: AdminArgs): Promise<unknown> {
  const dataDir = resolve(opts.data);
  const holder = lockHolder(dataDir);
  if (holder !== undefined) {
    if (!existsSync(socketPath(dataDir))) {
      throw new Error(`process ${holder} holds ${dataDir} but has no admin socket (${socketPath(dataDir)}); is it a pinbot serve?`);
    }
    return callAdmin(dataDir, cmd, args);
  }
  const config = loadConfig(opts.config);
  const store = await FileStore.open(dataDir, { compactBytes: config.store.compact_bytes, warn: (m) => process.stderr.write(`warning: ${m}\n`) });
  try {
    return await runAdminCommand({ store, env: { clock: systemClock, config } }, cmd, args);
  } finally {
    await store.close();
  }
}
