import { askServer } from '../admin-client.js';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { loadConfig } from '../../config/load.js';
import { createLogger } from '../../log.js';
import { buildRegistry } from '../../services/registry.js';
import { formatProblem } from '../../util/yaml-errors.js';
import { botFiles, common, type Common, formatBotLine, serverRunning, validateFiles } from './shared.js';

/** `pinbot bots list`. */
export function registerList(bots: Command): void {
  common(
    bots
      .command('list')
      .description('the bots and their state (from the running server, else from the files)')
      .option('--json', 'print JSON'),
  ).action(async (opts: Common & { json?: boolean }) => {
    const dataDir = resolve(opts.data);
    let list: Array<{
      name?: string;
      file: string;
      status: string;
      message?: string;
      problems?: string[];
      warnings?: string[];
      last_poll?: string;
      last_run?: string;
    }>;
    if (serverRunning(dataDir)) list = (await askServer(dataDir, 'bots.status', {})).bots;
    else {
      const config = loadConfig(opts.config);
      const registry = await buildRegistry({ config, log: createLogger({ level: config.log.level }) });
      list = validateFiles(botFiles([], opts), registry, config.bots).map((r) => ({
        name: r.name,
        file: r.file,
        status: r.problems.length ? 'invalid' : 'valid (not running)',
        problems: r.problems.map(formatProblem),
      }));
    }
    if (opts.json) return void process.stdout.write(JSON.stringify({ bots: list }) + '\n');
    if (!list.length) return void process.stdout.write('no bots\n');
    for (const b of list) {
      process.stdout.write(formatBotLine(b) + '\n');
      for (const p of b.problems ?? []) process.stdout.write(`    ${p}\n`);
      for (const w of b.warnings ?? []) process.stdout.write(`    warning: ${w}\n`);
    }
  });
}
