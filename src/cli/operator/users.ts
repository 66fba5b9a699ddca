import type { Command } from 'commander';
import { runOnDataDir, type CommonOptions } from '../admin-client.js';
import { common, print } from '../output.js';

/** `pinbot users add|list|grant|subscribe`. Internal. */
export function registerUsersCommands(program: Command): void {
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
      const r = await runOnDataDir(opts, 'users.add', {
        name: opts.name,
        balance: opts.balance,
        allow_duplicate: opts.allowDuplicate === true,
      });
      print(
        r,
        !!opts.json,
        (u) =>
          `created ${u.display_name}  pin ${u.pin_code}  id ${u.id}\napi key (shown ` +
          `once): ${u.api_key}${u.warning ? `\nwarning: ${u.warning}` : ''}`,
      );
    },
  );
  common(users.command('list').description('list users').option('--json', 'print JSON')).action(
    async (opts: CommonOptions & { json?: boolean }) => {
      const r = await runOnDataDir(opts, 'users.list', {});
      print(r, !!opts.json, (x) =>
        x.users.length
          ? x.users.map((u: any) => `${u.pin_code}  ${u.id}  ${u.display_name}`).join('\n')
          : 'no users yet: pinbot users add --name NAME',
      );
    },
  );
  common(
    users
      .command('grant')
      .description('credit a user (an operator grant)')
      .requiredOption('--pin <pin>')
      .requiredOption('--amount <amount>')
      .option('--json', 'print JSON'),
  ).action(async (opts: CommonOptions & { pin: string; amount: string; json?: boolean }) => {
    const r = await runOnDataDir(opts, 'users.grant', { pin: opts.pin, amount: opts.amount });
    print(r, !!opts.json, (t) => `granted ${t.amount} to ${t.recipient_pin} (${t.id})`);
  });
  common(
    users
      .command('subscribe')
      .description('extend a subscription by N days')
      .requiredOption('--pin <pin>')
      .requiredOption('--days <n>')
      .option('--json', 'print JSON'),
  ).action(async (opts: CommonOptions & { pin: string; days: string; json?: boolean }) => {
    const r = await runOnDataDir(opts, 'users.subscribe', { pin: opts.pin, days: opts.days });
    print(r, !!opts.json, (s) => `subscription ${s.status} until ${s.end_date}`);
  });
}
