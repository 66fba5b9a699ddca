import type { Command } from 'commander';
import { runOnDataDir, type CommonOptions } from './admin-client.js';
import { common, print } from './output.js';

/**
 * `pinbot users|keys|clock …`: operator commands, run through the admin socket of the server
 * on the data directory, or on the store itself when none runs. Internal.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: longer than 80 lines before the rule; to split (issue 28 item 4)
export function registerOperatorCommands(program: Command): void {
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
          `created ${u.display_name}  pin ${u.pin_code}  id ${u.id}\napi key (shown once): ${u.api_key}${u.warning ? `\nwarning: ${u.warning}` : ''}`,
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

  const keys = program.command('keys').description('manage API keys');
  common(
    keys
      .command('create')
      .description('create an API key for a user')
      .requiredOption('--pin <pin>')
      .option('--json', 'print JSON'),
  ).action(async (opts: CommonOptions & { pin: string; json?: boolean }) => {
    const r = await runOnDataDir(opts, 'keys.create', { pin: opts.pin });
    print(r, !!opts.json, (k) => `key ${k.id}\napi key (shown once): ${k.api_key}`);
  });
  common(
    keys.command('list').description("list a user's keys").requiredOption('--pin <pin>').option('--json', 'print JSON'),
  ).action(async (opts: CommonOptions & { pin: string; json?: boolean }) => {
    const r = await runOnDataDir(opts, 'keys.list', { pin: opts.pin });
    print(
      r,
      !!opts.json,
      (x) =>
        x.keys
          .map(
            (k: any) =>
              `${k.id}  created ${k.created_at}  last used ${k.last_used_at ?? 'never'}${k.revoked_at ? `  REVOKED ${k.revoked_at}` : ''}`,
          )
          .join('\n') || 'no keys',
    );
  });
  common(
    keys.command('revoke').description('revoke a key at once').argument('<key_id>').option('--json', 'print JSON'),
  ).action(async (id: string, opts: CommonOptions & { json?: boolean }) => {
    const r = await runOnDataDir(opts, 'keys.revoke', { id });
    print(r, !!opts.json, (k) => `revoked ${k.id}`);
  });

  const clock = program.command('clock').description('move the virtual clock of a `serve --virtual-clock` server');
  common(
    clock
      .command('advance')
      .description('advance by DURATION (90s, 15m, 2h, 3d), running due jobs')
      .argument('<duration>')
      .option('--json', 'print JSON'),
  ).action(async (duration: string, opts: CommonOptions & { json?: boolean }) => {
    print(await runOnDataDir(opts, 'clock.advance', { duration }), !!opts.json, (r) => `now ${r.now}`);
  });
  common(
    clock
      .command('set')
      .description('set the time (ISO 8601), running due jobs')
      .argument('<iso>')
      .option('--json', 'print JSON'),
  ).action(async (isoText: string, opts: CommonOptions & { json?: boolean }) => {
    print(await runOnDataDir(opts, 'clock.set', { iso: isoText }), !!opts.json, (r) => `now ${r.now}`);
  });
}
