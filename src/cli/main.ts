import { Command, InvalidArgumentError, Option } from 'commander';
import { AdminError } from '../admin/commands.js';
import { ConfigError } from '../config/load.js';
import { createLogger } from '../log.js';
import { ListenError, PortInUseError } from '../server-errors.js';
import { StoreDamagedError } from '../store/core/errors.js';
import { DataDirLockedError } from '../store/file/lock.js';
import { SnapshotError } from '../store/file/snapshot-file.js';
import pg from 'pg';
import { TransferMismatchError } from '../services/store-transfer.js';
import { TargetNotEmptyError } from '../store/transfer.js';
import { commandConfig, runOnDataDir, type CommonOptions } from './admin-client.js';
import { exitAfterLog } from './exit.js';
import { registerExtraCommands } from './extra-commands.js';
import { exitQuietlyOnClosedPipe } from './quiet-pipe.js';

exitQuietlyOnClosedPipe();

/** Prints a command's result: JSON with --json, else a short human form. Internal. */
export function print(result: unknown, json: boolean, human?: (r: any) => string): void {
  if (json || !human) process.stdout.write(JSON.stringify(result, null, json ? 0 : 2) + '\n');
  else process.stdout.write(human(result) + '\n');
}

/** Adds --data and --config to a command. Internal. */
export function common(cmd: Command): Command {
  return cmd.option('--data <dir>', 'data directory', './data').option('--config <file>', 'config file', './config.yaml');
}

const program = new Command('pinbot')
  .description('Self-hostable bot runtime and local twin of the /api/v1 service')
  .showHelpAfterError('(run with --help for usage)')
  .hook('preAction', (_program, action) => {
    // An explicit --config must exist; the default ./config.yaml may be missing (all defaults).
    if (action.getOptionValue('config') !== undefined) action.setOptionValue('configGiven', action.getOptionValueSource('config') === 'cli');
  });

common(
  program
    .command('serve')
    .description('serve /api/v1 on the data directory and run the bots of bots/')
    .option('--host <host>', 'interface to listen on (default from config: 127.0.0.1)')
    .addOption(new Option('--port <port>', 'port (0 picks a free one)').argParser((v) => {
      const n = Number(v);
      if (!/^\d+$/.test(v) || n > 65535) throw new InvalidArgumentError('a port is a whole number 0–65535 (0 picks a free port)');
      return n;
    }))
    .option('--virtual-clock', 'time moves only with `pinbot clock advance|set`')
    .option('--no-bots', 'do not run the bots of bots/')
    .option('--dry-run', 'bots evaluate rules and log actions without taking them')
    .option('--safe', 'load no plugins (bots that use plugin entries are reported invalid)'),
).action(async (opts: CommonOptions & { host?: string; port?: number; virtualClock?: boolean; bots: boolean; dryRun?: boolean; safe?: boolean }) => {
  const config = commandConfig(opts);
  const log = createLogger({ level: config.log.level, bufferBytes: config.log.buffer_bytes });
  // Loaded here, not at the top: the other commands do not need express.
  const { startServer } = await import('../server.js');
  const { defaultServices } = await import('../services/index.js');
  const { consoleService } = await import('../console/service.js');
  const { scenarioPort } = await import('../scenario/console-port.js');
  // Signals are caught from the start: one that arrives while starting stops the server as
  // soon as it is up (the `listening` line may already be out).
  let early: string | undefined;
  let stop = (signal: string) => void (early ??= signal);
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  const server = await startServer({ dataDir: opts.data, config, host: opts.host, port: opts.port, virtualClock: opts.virtualClock, dryRun: opts.dryRun === true, safe: opts.safe === true, log, services: [...defaultServices({ bots: opts.bots }), consoleService({ scenarios: scenarioPort('scenarios') })] });
  // in a terminal, the console's first sign-in link (later ones: `pinbot console`)
  if (process.stdout.isTTY) {
    const link = (await server.command?.('console.link').catch(() => undefined)) as { url: string } | undefined;
    if (link) process.stdout.write(`\nconsole: open ${link.url}\n  (one-time link; \`npx pinbot console\` prints another)\n\n`);
  }
  let stopping = false;
  stop = (signal: string) => {
    if (stopping) {
      // A second Ctrl-C: the operator does not want to wait. The journal keeps every write.
      log.warn({ signal }, 'stopping now without a snapshot (the journal replays at the next start)');
      void exitAfterLog(log, 130, 200);
      return;
    }
    stopping = true;
    log.info({ signal }, 'stopping: finishing in-flight requests, writing the snapshot');
    server.close().then(
      () => {
        log.info('stopped');
        void exitAfterLog(log, 0);
      },
      (err) => {
        log.error({ err }, 'stop failed');
        void exitAfterLog(log, 1);
      },
    );
  };
  if (early) stop(early);
});

const users = program.command('users').description('manage users (the stand-in for the mobile app)');
common(
  users
    .command('add')
    .description('create a user and a first API key')
    .requiredOption('--name <name>', 'display name')
    .option('--balance <amount>', 'starting balance (an operator grant)')
    .option('--allow-duplicate', 'create it even if a user already has this display name')
    .option('--json', 'print JSON'),
).action(
  async (opts: CommonOptions & { name: string; balance?: string; allowDuplicate?: boolean; json?: boolean }) => {
    const r = await runOnDataDir(opts, 'users.add', { name: opts.name, balance: opts.balance, allow_duplicate: opts.allowDuplicate === true });
    print(r, !!opts.json, (u) => `created ${u.display_name}  pin ${u.pin_code}  id ${u.id}\napi key (shown once): ${u.api_key}${u.warning ? `\nwarning: ${u.warning}` : ''}`);
  },
);
common(users.command('list').description('list users').option('--json', 'print JSON')).action(async (opts: CommonOptions & { json?: boolean }) => {
  const r = await runOnDataDir(opts, 'users.list', {});
  print(r, !!opts.json, (x) => (x.users.length ? x.users.map((u: any) => `${u.pin_code}  ${u.id}  ${u.display_name}`).join('\n') : 'no users yet: pinbot users add --name NAME'));
});
common(users.command('grant').description('credit a user (an operator grant)').requiredOption('--pin <pin>').requiredOption('--amount <amount>').option('--json', 'print JSON')).action(
  async (opts: CommonOptions & { pin: string; amount: string; json?: boolean }) => {
    const r = await runOnDataDir(opts, 'users.grant', { pin: opts.pin, amount: opts.amount });
    print(r, !!opts.json, (t) => `granted ${t.amount} to ${t.recipient_pin} (${t.id})`);
  },
);
common(users.command('subscribe').description('extend a subscription by N days').requiredOption('--pin <pin>').requiredOption('--days <n>').option('--json', 'print JSON')).action(
  async (opts: CommonOptions & { pin: string; days: string; json?: boolean }) => {
    const r = await runOnDataDir(opts, 'users.subscribe', { pin: opts.pin, days: opts.days });
    print(r, !!opts.json, (s) => `subscription ${s.status} until ${s.end_date}`);
  },
);

const keys = program.command('keys').description('manage API keys');
common(keys.command('create').description('create an API key for a user').requiredOption('--pin <pin>').option('--json', 'print JSON')).action(async (opts: CommonOptions & { pin: string; json?: boolean }) => {
  const r = await runOnDataDir(opts, 'keys.create', { pin: opts.pin });
  print(r, !!opts.json, (k) => `key ${k.id}\napi key (shown once): ${k.api_key}`);
});
common(keys.command('list').description("list a user's keys").requiredOption('--pin <pin>').option('--json', 'print JSON')).action(async (opts: CommonOptions & { pin: string; json?: boolean }) => {
  const r = await runOnDataDir(opts, 'keys.list', { pin: opts.pin });
  print(r, !!opts.json, (x) =>
    x.keys.map((k: any) => `${k.id}  created ${k.created_at}  last used ${k.last_used_at ?? 'never'}${k.revoked_at ? `  REVOKED ${k.revoked_at}` : ''}`).join('\n') || 'no keys',
  );
});
common(keys.command('revoke').description('revoke a key at once').argument('<key_id>').option('--json', 'print JSON')).action(async (id: string, opts: CommonOptions & { json?: boolean }) => {
  const r = await runOnDataDir(opts, 'keys.revoke', { id });
  print(r, !!opts.json, (k) => `revoked ${k.id}`);
});

const clock = program.command('clock').description('move the virtual clock of a `serve --virtual-clock` server');
common(clock.command('advance').description('advance by DURATION (90s, 15m, 2h, 3d), running due jobs').argument('<duration>').option('--json', 'print JSON')).action(
  async (duration: string, opts: CommonOptions & { json?: boolean }) => {
    print(await runOnDataDir(opts, 'clock.advance', { duration }), !!opts.json, (r) => `now ${r.now}`);
  },
);
common(clock.command('set').description('set the time (ISO 8601), running due jobs').argument('<iso>').option('--json', 'print JSON')).action(async (isoText: string, opts: CommonOptions & { json?: boolean }) => {
  print(await runOnDataDir(opts, 'clock.set', { iso: isoText }), !!opts.json, (r) => `now ${r.now}`);
});

registerExtraCommands(program);

/** Errors an operator can act on from their message alone: printed as one line, no stack. */
const OPERATOR_ERRORS = [AdminError, ConfigError, DataDirLockedError, PortInUseError, ListenError, SnapshotError, StoreDamagedError, TransferMismatchError, TargetNotEmptyError, pg.DatabaseError];

try {
  await program.parseAsync(process.argv);
} catch (err) {
  const e = err as NodeJS.ErrnoException;
  // System errors (EACCES on the data directory, ENOSPC …) name the path and the cause.
  const known = OPERATOR_ERRORS.some((c) => err instanceof c) || (typeof e?.code === 'string' && typeof e.syscall === 'string');
  process.stderr.write(`pinbot: ${known ? e.message : (e?.stack ?? String(err))}\n`);
  process.exit(1);
}
