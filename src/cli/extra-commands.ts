import type { Command } from 'commander';

/**
 * Commands of later areas (bots, scenarios), added to the program here so main.ts stays small.
 * Internal.
 */
export function registerExtraCommands(_program: Command): void {}
