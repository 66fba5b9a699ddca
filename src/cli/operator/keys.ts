import type { Command } from 'commander';
import { runOnDataDir, type CommonOptions } from '../admin-client.js';
import { common, print } from '../output.js';

/** `pinbot keys create|list|revoke`. Internal. */
export function registerKeysCommands(program: Command): void {
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
              `${k.id}  created ${k.created_at}  last used ` +
              `${k.last_used_at ?? 'never'}${k.revoked_at ? `  REVOKED ${k.revoked_at}` : ''}`,
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
}
