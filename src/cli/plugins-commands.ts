import type { Command } from 'commander';
import { registerPluginsList } from './plugins/list.js';
import { registerPluginsNew } from './plugins/new.js';
import { registerSchemasCommand } from './plugins/schemas.js';

/** `pinbot plugins …` (list, new) and `pinbot schemas`; one module per command (plugins/). */
export function registerPluginCommands(program: Command): void {
  const plugins = program
    .command('plugins')
    .description('TypeScript plugins (plugins/*.ts and npm packages of config.yaml)');
  registerPluginsList(plugins);
  registerPluginsNew(plugins);
  registerSchemasCommand(program);
}
