import type { Command } from 'commander';

export { formatBotLine, validateFiles } from './bots/shared.js';

/** A `bots` command's module, loaded when its name is on the command line. Internal. */
type Register = () => Promise<(bots: Command) => void>;

/**
 * The modules of `pinbot bots …`, by the command names they register (as cli/main.ts does one
 * level up): `bots validate FILE` on every save loads the validator, not the trace reader, the
 * what-if replay or the admin client (bench cli: `bots validate` ≤ 5× `node -e 0`). Internal.
 */
const COMMANDS: Record<string, Register> = {
  dialogs: async () => (await import('./bots/dialogs.js')).registerDialogCommands,
  validate: async () => (await import('./bots/validate.js')).registerValidate,
  run: async () => (await import('./bots/run.js')).registerRun,
  list: async () => (await import('./bots/list.js')).registerList,
  memory: async () => (await import('./bots/memory.js')).addMemoryCommand,
  trace: async () => (await import('./bots/trace.js')).registerTrace,
  'what-if': async () => (await import('./bots/what-if.js')).registerWhatIf,
  reload: async () => (await import('./bots/reload.js')).registerReload,
  vars: async () => (await import('./bots/vars.js')).registerVars,
  pause: async () => (await import('./bots/pause-resume.js')).registerPauseResume,
};
COMMANDS['end-dialog'] = COMMANDS.dialogs!;
COMMANDS.resume = COMMANDS.pause!;

/**
 * `pinbot bots …`: validate, run, list, trace, reload, pause, resume; one module per command
 * (bots/), only the named one loaded (all of them for `--help` or an unknown name). Returns once
 * they are registered: main awaits it before parsing.
 */
export async function registerBotCommands(program: Command, argv = process.argv): Promise<void> {
  const bots = program.command('bots').description('validate, run and inspect bots (YAML files in bots/)');
  const at = argv.indexOf('bots', 2);
  const name = at === -1 ? undefined : argv.slice(at + 1).find((a) => !a.startsWith('-'));
  const only = name !== undefined ? COMMANDS[name] : undefined;
  const wanted = only ? [only] : [...new Set(Object.values(COMMANDS))];
  for (const register of await Promise.all(wanted.map((load) => load()))) register(bots);
}
