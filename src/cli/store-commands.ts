import type { Command } from 'commander';
import { AdminError } from '../admin/errors.js';
import { exportDataDir, importDataDir, type TransferReport } from '../deployment/store-transfer.js';
import { commandConfig, type CommonOptions } from './admin-client.js';

interface StoreOptions extends CommonOptions {
  url?: string;
  schema?: string;
  json?: boolean;
}

/** The database of a command: --url/--schema, else store.url/store.schema of the config. Internal. */
function target(opts: StoreOptions) {
  const config = commandConfig(opts);
  const url = opts.url ?? config.store.url;
  if (!url)
    throw new AdminError(
      'no database: give --url postgres://… or set store.url in the config (e.g. store.url: ${env:DATABASE_URL})',
    );
  if (!/^postgres(ql)?:\/\//.test(url)) throw new AdminError('--url must be a postgres:// URL');
  return {
    url,
    schema: opts.schema ?? config.store.schema,
    warn: (m: string) => process.stderr.write(`warning: ${m}\n`),
  };
}

/** The report, for people. Internal. */
function human(verb: string, r: TransferReport): string {
  const counts = Object.entries(r.records).map(([name, n]) => `  ${name.padEnd(24)} ${n}`);
  const m = r.money;
  return [
    `${verb} ${r.from} → ${r.to}; read back and compared record by record:`,
    ...(counts.length ? counts : ['  (no records)']),
    `money (cents): balances ${m.balances} + pending ${m.pending} = UBI + grants ${m.credits} ✓`,
  ].join('\n');
}

/** `pinbot store import|export`: move a data directory into PostgreSQL and back. Internal. */
export function registerStoreCommands(program: Command): void {
  const store = program
    .command('store')
    .description('move the store between a data directory and PostgreSQL (docs/scaling.md)');
  const common = (cmd: Command) =>
    cmd
      .option('--config <file>', 'config file (store.url, store.schema)', './config.yaml')
      .option('--url <url>', 'the database (default: store.url of the config)')
      .option('--schema <name>', 'the schema (default: store.schema of the config, pinbot)')
      .option('--json', 'print JSON');
  common(
    store
      .command('import')
      .description('copy a data directory into an empty PostgreSQL database, then check the copy')
      .option('--data <dir>', 'the data directory (its server must be stopped)', './data'),
  ).action(async (opts: StoreOptions) => {
    const r = await importDataDir(opts.data, target(opts));
    process.stdout.write((opts.json ? JSON.stringify(r) : human('imported', r)) + '\n');
  });
  common(
    store
      .command('export')
      .description('copy the PostgreSQL store into a new data directory, then check the copy')
      .requiredOption('--data <dir>', 'the new data directory (must not exist or be empty)'),
  ).action(async (opts: StoreOptions) => {
    const r = await exportDataDir(opts.data, target(opts));
    process.stdout.write((opts.json ? JSON.stringify(r) : human('exported', r)) + '\n');
  });
}
