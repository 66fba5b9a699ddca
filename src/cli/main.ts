import { Command, CommanderError } from 'commander';
import { PINBOT_VERSION } from '../plugin-api/version.js';
import { exitQuietlyOnClosedPipe } from './quiet-pipe.js';
import { OperatorError } from '../util/operator-error.js';

// `pinbot bots list | head -1`: a reader that goes away ends the command quietly
exitQuietlyOnClosedPipe();

/**
 * The `pinbot` command. A call loads only the code of the command it runs: each group of
 * commands is a module imported when its name is on the command line (all of them for `--help`
 * or an unknown name), and the modules import what their actions need.
 */

/** The commands' modules, by the name that selects them. Internal. */
const GROUPS: Record<string, () => Promise<(program: Command) => void | Promise<void>>> = {
  serve: async () => (await import('./serve-command.js')).registerServeCommand,
  users: async () => (await import('./operator-commands.js')).registerOperatorCommands,
  bots: async () => (await import('./bots-commands.js')).registerBotCommands,
  plugins: async () => (await import('./plugins-commands.js')).registerPluginCommands,
  scenario: async () => (await import('./scenario-commands.js')).registerScenarioCommands,
  store: async () => (await import('./store-commands.js')).registerStoreCommands,
  console: async () => (await import('./console-commands.js')).registerConsoleCommands,
  init: async () => (await import('./init.js')).registerInitCommand,
};
GROUPS.keys = GROUPS.clock = GROUPS.users!;
GROUPS.schemas = GROUPS.plugins!;

const program = new Command('pinbot')
  .description('Self-hostable bot runtime and local twin of the /api/v1 service')
  .version(PINBOT_VERSION, '-V, --version', "print pinbot's version")
  .showHelpAfterError('(run with --help for usage)')
  .hook('preAction', (_program, action) => {
    // An explicit --config must exist; the default ./config.yaml may be missing (all defaults).
    if (action.getOptionValue('config') !== undefined)
      action.setOptionValue('configGiven', action.getOptionValueSource('config') === 'cli');
  });

/** Errors an operator can act on from their message alone: printed as one line, no stack. */
async function operatorError(err: unknown): Promise<boolean> {
  const e = err as NodeJS.ErrnoException;
  // System errors (EACCES on the data directory, ENOSPC …) name the path and the cause.
  if (typeof e?.code === 'string' && typeof e.syscall === 'string') return true;
  if (!(err instanceof Error)) return false;
  // a bad argument found in an action (InvalidArgumentError): its message says what to write
  if (err instanceof CommanderError) return true;
  // every layer's operator errors extend one base (util/operator-error.ts)
  if (err instanceof OperatorError) return true;
  // the database's own refusals (a wrong password, a missing database) name what to fix
  const pg = await import('pg');
  return err instanceof pg.default.DatabaseError;
}

try {
  const name = process.argv.slice(2).find((a) => !a.startsWith('-'));
  const only = name !== undefined ? GROUPS[name] : undefined;
  // --version needs no command at all; --help and unknown names need them all (help, suggestions)
  const wanted = only
    ? [only]
    : process.argv.slice(2).some((a) => a === '-V' || a === '--version') && name === undefined
      ? []
      : [...new Set(Object.values(GROUPS))];
  for (const register of await Promise.all(wanted.map((load) => load()))) await register(program);
  await program.parseAsync(process.argv);
} catch (err) {
  const e = err as Error;
  process.stderr.write(`pinbot: ${(await operatorError(err)) ? e.message : (e?.stack ?? String(err))}\n`);
  process.exit(1);
}
