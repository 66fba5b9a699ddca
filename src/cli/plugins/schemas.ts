import { relative } from 'node:path';
import type { Command } from 'commander';
import { loadConfig } from '../../config/load.js';
import { createLogger } from '../../log.js';
import { writeSchemas } from '../schemas.js';
import { common, type Common, notLoaded } from './shared.js';

/** `pinbot schemas`. Internal. */
export function registerSchemasCommand(program: Command): void {
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
