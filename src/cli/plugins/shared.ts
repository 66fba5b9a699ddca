import type { Command } from 'commander';
import type { PluginReport } from '../../plugin-api/host.js';

/** The options every plugin command takes. Internal. */
export interface Common {
  data: string;
  config: string;
}

/** Adds --data and --config to a command. Internal. */
export const common = (cmd: Command) =>
  cmd.option('--data <dir>', 'data directory', './data').option('--config <file>', 'config file', './config.yaml');

/** `2 plugins did not load: dice (plugins/dice.ts): why; …` for an exit message. Internal. */
export function notLoaded(invalid: Array<Pick<PluginReport, 'name' | 'source' | 'message'>>): string {
  const one = (p: (typeof invalid)[number]) =>
    `${p.name ? `${p.name} (${p.source})` : p.source}: ${p.message ?? 'invalid'}`;
  return `${invalid.length} plugin${invalid.length === 1 ? '' : 's'} did not load: ${invalid.map(one).join('; ')} — fix ${invalid.length === 1 ? 'it' : 'them'} (pinbot plugins list says more), or remove ${invalid.length === 1 ? 'it' : 'them'}`;
}
