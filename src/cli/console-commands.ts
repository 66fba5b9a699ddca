import { askServer } from './admin-client.js';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { AdminError } from '../admin/errors.js';
import { socketPath } from '../admin/socket.js';

/** `pinbot console`: a one-time sign-in link to the web console of the running server. Internal. */
export function registerConsoleCommands(program: Command): void {
  program
    .command('console')
    .description('print a one-time sign-in link to the web console of the running server (docs/console.md)')
    .option('--data <dir>', 'data directory', './data')
    .option('--json', 'print JSON')
    .action(async (opts: { data: string; json?: boolean }) => {
      const dataDir = resolve(opts.data);
      if (!existsSync(socketPath(dataDir)))
        throw new AdminError(
          `no server runs on ${dataDir} (no admin socket ${socketPath(dataDir)}); ` +
            `start it with \`pinbot serve\`, then run \`pinbot console\` again`,
        );
      const r = await askServer(dataDir, 'console.link', {});
      process.stdout.write(
        opts.json
          ? `${JSON.stringify(r)}\n`
          : `Open this link to sign in (it works once, until ${r.expires_at}):\n\n  ${r.url}\n`,
      );
    });
}
