import { askServer } from '../admin-client.js';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { socketPath } from '../../admin/socket.js';
import { loadConfig } from '../../config/load.js';
import { createLogger } from '../../log.js';
import type { PluginReport } from '../../plugin-api/host.js';
import { buildRegistry } from '../../services/registry.js';
import { lockHolder } from '../../store/file/lock.js';
import { common, type Common, notLoaded } from './shared.js';

/** A plugin as one line, and what it registers below it. Internal. */
function describe(p: PluginReport): string {
  const head = `${(p.name ?? '?').padEnd(16)} ${(p.version ?? '').padEnd(8)} ${p.status.padEnd(12)} ${p.source}`;
  const lines = [head];
  const r = p.registers;
  if (r) {
    const parts = [
      r.actions.length && `actions: ${r.actions.join(', ')}`,
      r.conditions.length && `conditions: ${r.conditions.join(', ')}`,
      r.triggers.length && `triggers: ${r.triggers.join(', ')}`,
    ].filter(Boolean);
    if (parts.length) lines.push(`    ${parts.join('; ')}`);
  }
  if (p.message) lines.push(`    ${p.status === 'running' ? 'note' : 'why'}: ${p.message}`);
  return lines.join('\n');
}

/** `pinbot plugins list`. Internal. */
export function registerPluginsList(plugins: Command): void {
  common(
    plugins
      .command('list')
      .description(
        'the plugins: version, source, status (running, disabled, quarantined, invalid) and what each registers',
      )
      .option('--json', 'print JSON'),
  ).action(async (opts: Common & { json?: boolean }) => {
    const dataDir = resolve(opts.data);
    let list: PluginReport[];
    let problems: string[];
    if (lockHolder(dataDir) !== undefined && existsSync(socketPath(dataDir))) {
      ({ plugins: list, problems } = await askServer(dataDir, 'plugins.status', {}));
    } else {
      const config = loadConfig(opts.config);
      const host = (await buildRegistry({ config, log: createLogger({ level: 'silent' }) })).plugins;
      list = host?.status() ?? [];
      problems = host?.problemLines() ?? [];
    }
    const invalid = list.filter((p) => p.status === 'invalid');
    // a plugin that did not load fails the command, so a script or CI job sees it
    // (problems may be warnings only: those do not fail it)
    if (invalid.length) process.exitCode = 1;
    if (opts.json) return void process.stdout.write(JSON.stringify({ plugins: list, problems }) + '\n');
    if (!list.length && !problems.length)
      return void process.stdout.write('no plugins (add one with `pinbot plugins new NAME`)\n');
    for (const p of list) process.stdout.write(describe(p) + '\n');
    if (problems.length) process.stdout.write(`\n${problems.join('\n')}\n`);
    if (invalid.length) process.stderr.write(`pinbot: ${notLoaded(invalid)}\n`);
  });
}
