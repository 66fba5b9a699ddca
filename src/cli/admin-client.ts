import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AdminArgs, ArgsOf, CommandTable, ResultOf } from '../admin/commands.js';
import { AdminError } from '../admin/errors.js';
import { AdminUnreachableError, callAdmin, socketPath } from '../admin/socket.js';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { storeIsShared } from '../deployment/driver.js';
import type { CommandName, ServerCommands } from '../services/commands.js';
import type { ConsoleCommands } from '../console/service.js';
import { DataDirLockedError, lockHolder } from '../store/file/lock.js';

export interface CommonOptions {
  data: string;
  config: string;
  /** True when --config was given on the command line (then the file must exist). */
  configGiven?: boolean;
}

/** How long a command waits for a directory held by a process without an admin socket. */
const BUSY_WAIT_MS = 10_000;

/**
 * Loads the config of a command: `--config FILE` given explicitly must exist; the default
 * ./config.yaml may be missing (all defaults).
 */
export function commandConfig(opts: CommonOptions): Config {
  if (opts.configGiven && !existsSync(opts.config)) {
    throw new AdminError(
      `config file ${opts.config} does not exist. Check the path, or leave out ` +
        `--config to use ./config.yaml (or the defaults).`,
    );
  }
  return loadConfig(opts.config);
}

/**
 * Runs an operator command on a data directory: through the admin socket when a server holds
 * the directory, otherwise by opening the store itself (under its lock). With `store.driver:
 * postgres`, store commands go to the database directly. A directory held by a
 * process without a socket yet (a server starting, another CLI command) is waited for.
 */
export async function runOnDataDir<N extends CommandName>(
  opts: CommonOptions,
  cmd: N,
  args: ArgsOf<ServerCommands[N]>,
  offline: { extra?: CommandTable } = {},
): Promise<ResultOf<ServerCommands[N]>> {
  return (await runUntyped(opts, cmd, args, offline)) as ResultOf<ServerCommands[N]>;
}

/** Every command the CLI calls on a server: the server's, and the console's `console.link`. */
type CliCommands = ServerCommands & ConsoleCommands;

/**
 * Sends one command to the server running on `dataDir` (its admin socket); the answer typed by
 * the command's definition.
 *
 * @example const { bots } = await askServer(dataDir, 'bots.status', {});
 */
export async function askServer<N extends keyof CliCommands & string>(
  dataDir: string,
  cmd: N,
  args: ArgsOf<CliCommands[N]>,
): Promise<ResultOf<CliCommands[N]>> {
  return (await callAdmin(dataDir, cmd, args)) as ResultOf<CliCommands[N]>;
}

async function runUntyped(
  opts: CommonOptions,
  cmd: string,
  args: AdminArgs,
  offline: { extra?: CommandTable },
): Promise<unknown> {
  const dataDir = resolve(opts.data);
  const config = commandConfig(opts);
  if (storeIsShared(config) && !cmd.startsWith('clock.')) {
    // The database is shared: talk to it directly, whether servers run or not (they see the
    // change within moments). Clock commands move one server's virtual clock: its socket.
    // The stores and the commands are loaded only when this process runs the command itself
    // (a call to a running server's socket needs none of them).
    const [{ openSharedStore }, { runAdminCommand }, { systemClock }] = await Promise.all([
      import('../deployment/store-only.js'),
      import('../admin/commands.js'),
      import('../clock/clock.js'),
    ]);
    const store = await openSharedStore(config, (m) => process.stderr.write(`warning: ${m}\n`));
    try {
      return await runAdminCommand({ store, env: { clock: systemClock, config }, extra: offline.extra }, cmd, args);
    } finally {
      await store.close();
    }
  }
  const deadline = Date.now() + BUSY_WAIT_MS;
  for (;;) {
    const holder = lockHolder(dataDir);
    if (holder !== undefined && existsSync(socketPath(dataDir))) {
      try {
        return await callAdmin(dataDir, cmd, args);
      } catch (err) {
        // Not sent (the server is starting or stopping): safe to try again.
        if (!(err instanceof AdminUnreachableError) || Date.now() > deadline) throw err;
      }
    } else if (holder === undefined) {
      try {
        const [{ openFileStore }, { runAdminCommand }, { systemClock }] = await Promise.all([
          import('../deployment/store-only.js'),
          import('../admin/commands.js'),
          import('../clock/clock.js'),
        ]);
        const store = await openFileStore({ config, dataDir, warn: (m) => process.stderr.write(`warning: ${m}\n`) });
        try {
          return await runAdminCommand({ store, env: { clock: systemClock, config }, extra: offline.extra }, cmd, args);
        } finally {
          await store.close();
        }
      } catch (err) {
        if (!(err instanceof DataDirLockedError)) throw err;
      }
    }
    if (Date.now() > deadline) {
      throw new AdminError(
        `process ${lockHolder(dataDir) ?? '?'} holds ${dataDir} but has no admin ` +
          `socket (${socketPath(dataDir)}) after ${BUSY_WAIT_MS / 1000} s; is it a ` +
          `pinbot serve? Stop it or wait for it to finish.`,
      );
    }
    await sleep(100);
  }
}
