import type { Command } from 'commander';
import { registerBotCommands } from './bots-commands.js';
import { registerConsoleCommands } from './console-commands.js';
import { registerPluginCommands } from './plugins-commands.js';
import { registerScenarioCommands } from './scenario-commands.js';
import { registerStoreCommands } from './store-commands.js';

/**
 * Commands of later areas (bots, scenarios), added to the program here so main.ts stays small.
 * Internal.
 */
export function registerExtraCommands(program: Command): void {
  registerBotCommands(program);
  registerPluginCommands(program);
  registerScenarioCommands(program);
  registerStoreCommands(program);
  registerConsoleCommands(program);
}
