import type { Command } from 'commander';
import { registerWhatIf } from './bots/what-if.js';
import { addMemoryCommand } from './bots/memory.js';
import { registerDialogCommands } from './bots/dialogs.js';
import { registerList } from './bots/list.js';
import { registerPauseResume } from './bots/pause-resume.js';
import { registerReload } from './bots/reload.js';
import { registerRun } from './bots/run.js';
import { registerTrace } from './bots/trace.js';
import { registerValidate } from './bots/validate.js';
import { registerVars } from './bots/vars.js';

export { formatBotLine, validateFiles } from './bots/shared.js';

/** `pinbot bots …`: validate, run, list, trace, reload, pause, resume; one module per command (bots/). */
export function registerBotCommands(program: Command): void {
  const bots = program.command('bots').description('validate, run and inspect bots (YAML files in bots/)');
  registerDialogCommands(bots);
  registerValidate(bots);
  registerRun(bots);
  registerList(bots);
  addMemoryCommand(bots);
  registerTrace(bots);
  registerWhatIf(bots);
  registerReload(bots);
  registerVars(bots);
  registerPauseResume(bots);
}
