import type { Command } from 'commander';
import { registerClockCommands } from './operator/clock.js';
import { registerKeysCommands } from './operator/keys.js';
import { registerUsersCommands } from './operator/users.js';

/**
 * `pinbot users|keys|clock …`: operator commands, run through the admin socket of the server
 * on the data directory, or on the store itself when none runs; one module per group (operator/). Internal.
 */
export function registerOperatorCommands(program: Command): void {
  registerUsersCommands(program);
  registerKeysCommands(program);
  registerClockCommands(program);
}
