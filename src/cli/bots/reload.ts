import { askServer } from '../admin-client.js';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { AdminError } from '../../admin/errors.js';
import { common, type Common, serverRunning } from './shared.js';

/** `pinbot bots reload`. */
export function registerReload(bots: Command): void {
  common(
    bots
      .command('reload')
      .description('re-read the bot files of the running server now')
      .option('--json', 'print JSON'),
  ).action(async (opts: Common & { json?: boolean }) => {
    const dataDir = resolve(opts.data);
    if (!serverRunning(dataDir))
      throw new AdminError(`no server runs on ${dataDir}; bots are read when \`pinbot serve\` starts`);
    const r = await askServer(dataDir, 'bots.reload', {});
    if (opts.json) return void process.stdout.write(JSON.stringify(r) + '\n');
    for (const b of r.bots) process.stdout.write(`${(b.name ?? '?').padEnd(20)} ${b.status.padEnd(10)} ${b.file}\n`);
  });
}
