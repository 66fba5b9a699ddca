import { askServer } from '../admin-client.js';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { AdminError } from '../../admin/errors.js';
import { common, type Common, serverRunning } from './shared.js';

/** `pinbot bots pause NAME` and `pinbot bots resume NAME`. */
export function registerPauseResume(bots: Command): void {
  for (const verb of ['pause', 'resume'] as const) {
    common(
      bots
        .command(verb)
        .description(
          verb === 'pause' ? 'pause a bot of the running server (its events wait until resume)' : 'resume a paused bot',
        )
        .argument('<name>')
        .option('--json', 'print JSON'),
    ).action(async (name: string, opts: Common & { json?: boolean }) => {
      const dataDir = resolve(opts.data);
      if (!serverRunning(dataDir))
        throw new AdminError(`no server runs on ${dataDir}; ${verb} works on the bots of a running \`pinbot serve\``);
      const r = await askServer(dataDir, `bots.${verb}`, { name });
      process.stdout.write(opts.json ? JSON.stringify(r) + '\n' : `${r.bot} ${r.status}\n`);
    });
  }
}
