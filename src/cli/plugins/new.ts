import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { AdminError } from '../../admin/errors.js';
import { loadConfig } from '../../config/load.js';
import { createLogger } from '../../log.js';
import { PLUGIN_NAME } from '../../plugin-api/shape.js';
import { PINBOT_VERSION } from '../../plugin-api/version.js';
import { createRegistry } from '../../runtime/index.js';
import { exampleBot, pluginSource, pluginTest } from '../plugin-template.js';
import { docRef, schemaRef, startCommand, testCommand } from '../project-hints.js';
import { writeSchemas } from '../schemas.js';
import { common, type Common, notLoaded } from './shared.js';

/** `pinbot plugins new NAME`. Internal. */
export function registerPluginsNew(plugins: Command): void {
  common(
    plugins
      .command('new')
      .description('scaffold plugins/NAME.ts and its test (NAME: lower-case letters, digits and _)')
      .argument('<name>'),
  ).action(newPlugin);
}

/** Scaffolds plugins/NAME.ts and its test, and says how to use it. Internal. */
async function newPlugin(name: string, opts: Common): Promise<void> {
  if (!PLUGIN_NAME.test(name))
    throw new AdminError(
      `"${name}" cannot name a plugin: use lower-case letters, digits and _, ` +
        `starting with a letter (e.g. hello or tip_jar)`,
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
    `created ${relative('.', file)} (the plugin: actions ${name}.greet, ${name}.welcome)`,
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
      `(editors complete ${name}.* in bot files once \`npx pinbot schemas\` has ` +
        `written schemas/ with your plugins: point their first line at ` +
        `../schemas/bot.schema.json)`,
    );
  const doc = docRef('plugins.md');
  out.push(
    '',
    'Use it in a bot, e.g. ' + `${config.bots.dir}/${name}-demo.yaml:`,
    '',
    exampleBot(name, schemaRef('bot.schema.json', config.bots.dir)),
    `Then: npx pinbot bots validate, and ${startCommand()} (restart it if it is ` +
      `running: plugins load at start).${doc ? ` See ${doc}.` : ''}`,
  );
  process.stdout.write(out.join('\n') + '\n');
}
