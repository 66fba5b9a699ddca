import type { Command } from 'commander';
import { botVarsCommand, formatBotVars, type BotVarsView } from '../../services/bot-vars.js';
import { runOnDataDir } from '../admin-client.js';
import { common, type Common } from './shared.js';

/** `pinbot bots vars NAME [--reset]`. */
export function registerVars(bots: Command): void {
  common(
    bots
      .command('vars')
      .description("a bot's persistent variables (vars.NAME), and --reset to set them back to its file's vars:")
      .argument('<name>')
      .option('--reset', "set the variables back to the file's vars: (what set: wrote is dropped)")
      .option('--json', 'print JSON'),
  ).action(async (name: string, opts: Common & { reset?: boolean; json?: boolean }) => {
    // a running server answers it through its bots service; without one the CLI runs it on the store
    const r = (await runOnDataDir(
      opts,
      'bots.vars',
      { name, reset: opts.reset === true },
      { extra: { 'bots.vars': botVarsCommand } },
    )) as BotVarsView;
    process.stdout.write(opts.json ? JSON.stringify(r) + '\n' : formatBotVars(r));
  });
}
