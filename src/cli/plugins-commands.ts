import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { AdminError } from '../admin/errors.js';
import { callAdmin, socketPath } from '../admin/socket.js';
import { loadConfig } from '../config/load.js';
import { createLogger } from '../log.js';
import type { PluginReport } from '../plugin-api/host.js';
import { PLUGIN_NAME } from '../plugin-api/shape.js';
import { PINBOT_VERSION } from '../plugin-api/version.js';
import { createRegistry } from '../runtime/index.js';
import { buildRegistry } from '../services/registry.js';
import { lockHolder } from '../store/file/lock.js';
import { exampleBot, pluginSource, pluginTest } from './plugin-template.js';
import { docRef, schemaRef, startCommand, testCommand } from './project-hints.js';
import { writeSchemas } from './schemas.js';

interface Common {
  data: string;
  config: string;
}

const common = (cmd: Command) =>
  cmd.option('--data <dir>', 'data directory', './data').option('--config <file>', 'config file', './config.yaml');

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

/** `2 plugins did not load: dice (plugins/dice.ts): why; …` for an exit message. Internal. */
function notLoaded(invalid: Array<Pick<PluginReport, 'name' | 'source' | 'message'>>): string {
  const one = (p: (typeof invalid)[number]) =>
    `${p.name ? `${p.name} (${p.source})` : p.source}: ${p.message ?? 'invalid'}`;
  return `${invalid.length} plugin${invalid.length === 1 ? '' : 's'} did not load: ${invalid.map(one).join('; ')} — fix ${invalid.length === 1 ? 'it' : 'them'} (pinbot plugins list says more), or remove ${invalid.length === 1 ? 'it' : 'them'}`;
}

/** `pinbot plugins …` (list, new) and `pinbot schemas`. */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: longer than 80 lines before the rule; to split (issue 28 item 4)
export function registerPluginCommands(program: Command): void {
  const plugins = program
    .command('plugins')
    .description('TypeScript plugins (plugins/*.ts and npm packages of config.yaml)');

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
      ({ plugins: list, problems } = (await callAdmin(dataDir, 'plugins.status')) as {
        plugins: PluginReport[];
        problems: string[];
      });
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

  common(
    plugins
      .command('new')
      .description('scaffold plugins/NAME.ts and its test (NAME: lower-case letters, digits and _)')
      .argument('<name>'),
  ).action(async (name: string, opts: Common) => {
    if (!PLUGIN_NAME.test(name))
      throw new AdminError(
        `"${name}" cannot name a plugin: use lower-case letters, digits and _, starting with a letter (e.g. hello or tip_jar)`,
      );
    const builtins = createRegistry();
    const taken = [...builtins.actions.keys(), ...builtins.conditions.keys(), ...builtins.triggers.keys()].find(
      (n) => n.split('.')[0] === name,
    );
    if (taken) throw new AdminError(`"${name}" is the name of the built-in ${taken}; pick another name`);
    const config = loadConfig(opts.config);
    const dir = resolve(config.plugins.dir);
    const file = join(dir, `${name}.ts`);
    const test = join(dir, `${name}.test.ts`);
    for (const f of [file, test])
      if (existsSync(f))
        throw new AdminError(`${relative('.', f)} exists already; pick another name, or remove it first`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, pluginSource(name, PINBOT_VERSION));
    writeFileSync(test, pluginTest(name));
    const out = [
      `created ${relative('.', file)} (the plugin: action ${name}.greet)`,
      `created ${relative('.', test)} (its test: ${testCommand(relative('.', test))})`,
    ];
    if (existsSync(resolve('schemas'))) {
      const written = await writeSchemas({ config, log: createLogger({ level: 'silent' }) });
      if (!Array.isArray(written)) out.push(`schemas/ not updated: ${notLoaded(written.invalid)}`);
      else
        for (const w of written)
          if (w.changed) out.push(`updated ${relative('.', w.file)} (editors now complete ${name}.*)`);
    } else
      out.push(
        `(editors complete ${name}.* in bot files once \`npx pinbot schemas\` has written schemas/ with your plugins: point their first line at ../schemas/bot.schema.json)`,
      );
    const doc = docRef('plugins.md');
    out.push(
      '',
      'Use it in a bot, e.g. ' + `${config.bots.dir}/${name}-demo.yaml:`,
      '',
      exampleBot(name, schemaRef('bot.schema.json', config.bots.dir)),
      `Then: npx pinbot bots validate, and ${startCommand()} (restart it if it is running: plugins load at start).${doc ? ` See ${doc}.` : ''}`,
    );
    process.stdout.write(out.join('\n') + '\n');
  });

  common(
    program
      .command('schemas')
      .description("write schemas/bot.schema.json for this project (built-ins and the project's plugins), for editors"),
  ).action(async (opts: Common) => {
    const config = loadConfig(opts.config);
    const written = await writeSchemas({ config, log: createLogger({ level: config.log.level }) });
    if (!Array.isArray(written)) {
      // a schema without the broken plugin's entries would mark every use of them invalid
      process.stderr.write(`pinbot: nothing written: ${notLoaded(written.invalid)}\n`);
      process.exitCode = 1;
      return;
    }
    for (const w of written) process.stdout.write(`${w.changed ? 'wrote' : 'up to date:'} ${relative('.', w.file)}\n`);
  });
}
