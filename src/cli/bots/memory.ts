import { askServer } from '../admin-client.js';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { AdminError } from '../../admin/errors.js';
import { systemClock } from '../../clock/clock.js';
import { loadConfig } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import { createRegistry, loadBotFile } from '../../runtime/index.js';
import { formatMemory, memoryCommand, offlineMemory, type MemoryView } from '../../services/bot-memory.js';
import { lockHolder } from '../../store/file/lock.js';
import { serverRunning } from './shared.js';

interface MemoryOpts {
  data: string;
  config: string;
  person?: string;
  conversation?: string;
  forget?: string[];
  forgetAll?: boolean;
  json?: boolean;
}

/**
 * The bot file of `name` in the bots folder, compiled with the built-ins (its memory options),
 * if it loads. Internal. */
function botFileNamed(config: Config, name: string) {
  const dir = resolve(config.bots.dir);
  if (!existsSync(dir)) return undefined;
  for (const f of readdirSync(dir).filter((x) => /\.ya?ml$/.test(x))) {
    const { bot } = loadBotFile(join(dir, f), {
      registry: createRegistry().freeze(),
      envAllow: config.bots.env_allow,
      allowedServers: config.bots.allowed_servers,
      env: {},
    });
    if (bot?.name === name) return bot;
  }
  return undefined;
}

/**
 * With no server on the data directory: opens the store the bot's state lives in and runs the
 * command there. Internal. */
async function offline(name: string, args: Record<string, unknown>, opts: MemoryOpts): Promise<MemoryView> {
  const config = loadConfig(opts.config);
  const dataDir = resolve(opts.data);
  const bot = botFileNamed(config, name);
  const { openBotStateStore } = await import('../../deployment/store-only.js');
  const remote = bot !== undefined && bot.server !== 'embedded';
  const store = await openBotStateStore({
    config,
    dataDir,
    remote,
    warn: (m) => process.stderr.write(`warning: ${m}\n`),
  });
  try {
    return await memoryCommand(
      offlineMemory(store, name, bot?.memory, () => systemClock.now()),
      { name, ...args },
    );
  } finally {
    await store.close();
  }
}

/**
 * `pinbot bots memory NAME [--person PIN | --conversation ID] [--forget KEY…] [--forget-all]`:
 * what a bot remembers, and how an operator erases it (docs/bots.md "Memory").
 */
export function addMemoryCommand(bots: Command): void {
  bots
    .command('memory')
    .description(
      'what a bot remembers of people and conversations; --forget erases (privacy: --person PIN --forget-all)',
    )
    .argument('<name>')
    .option('--person <pin>', 'only this person (by PIN)')
    .option('--conversation <id>', 'only this conversation')
    .option('--forget <keys...>', 'forget these keys of that person (or conversation)')
    .option('--forget-all', 'forget everything remembered of that person (or conversation)')
    .option('--json', 'print JSON')
    .option('--data <dir>', 'data directory', './data')
    .option('--config <file>', 'config file', './config.yaml')
    .action(async (name: string, opts: MemoryOpts) => {
      const dataDir = resolve(opts.data);
      const args = {
        name,
        person: opts.person,
        conversation: opts.conversation,
        forget: opts.forget,
        forget_all: opts.forgetAll === true,
      };
      const running = serverRunning(dataDir);
      if (!running && lockHolder(dataDir) !== undefined)
        throw new AdminError(`another process holds ${dataDir}; try again when it is done`);
      const view = running ? await askServer(dataDir, 'bots.memory', args) : await offline(name, args, opts);
      process.stdout.write((opts.json ? JSON.stringify(view) : formatMemory(view)) + '\n');
    });
}
