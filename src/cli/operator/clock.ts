import type { Command } from 'commander';
import { runOnDataDir, type CommonOptions } from '../admin-client.js';
import { common, print } from '../output.js';

/** `pinbot clock advance|set`. Internal. */
export function registerClockCommands(program: Command): void {
  const clock = program.command('clock').description('move the virtual clock of a `serve --virtual-clock` server');
  common(
    clock
      .command('advance')
      .description('advance by DURATION (90s, 15m, 2h, 3d), running due jobs')
      .argument('<duration>')
      .option('--json', 'print JSON'),
  ).action(async (duration: string, opts: CommonOptions & { json?: boolean }) => {
    print(await runOnDataDir(opts, 'clock.advance', { duration }), !!opts.json, (r) => `now ${r.now}`);
  });
  common(
    clock
      .command('set')
      .description('set the time (ISO 8601), running due jobs')
      .argument('<iso>')
      .option('--json', 'print JSON'),
  ).action(async (isoText: string, opts: CommonOptions & { json?: boolean }) => {
    print(await runOnDataDir(opts, 'clock.set', { iso: isoText }), !!opts.json, (r) => `now ${r.now}`);
  });
}
