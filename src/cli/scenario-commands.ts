import type { Command } from 'commander';
import { registerScenarioRun } from './scenario/run.js';
import { registerScenarioValidate } from './scenario/validate.js';

/**
 * `pinbot scenario run|validate`: YAML scenarios acting as several users on a virtual clock
 * (see docs/scenarios.md); one module per command (scenario/). Internal.
 */
export function registerScenarioCommands(program: Command): void {
  const scenario = program.command('scenario').description('run and check YAML scenarios (docs/scenarios.md)');
  registerScenarioValidate(scenario);
  registerScenarioRun(scenario);
}
