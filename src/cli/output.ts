import type { Command } from 'commander';

/** Prints a command's result: JSON with --json, else a short human form. Internal. */
export function print(result: unknown, json: boolean, human?: (r: any) => string): void {
  if (json || !human) process.stdout.write(JSON.stringify(result, null, json ? 0 : 2) + '\n');
  else process.stdout.write(human(result) + '\n');
}

/** The options of a command that `common` adds. Internal. */
export interface DataOptions {
  data: string;
  config: string;
}

/** Adds --data and --config to a command. Internal. */
export function common(cmd: Command): Command {
  return cmd
    .option('--data <dir>', 'data directory', './data')
    .option('--config <file>', 'config file', './config.yaml');
}
