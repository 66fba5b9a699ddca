import { existsSync } from 'node:fs';
import { relative, resolve } from 'node:path';

/** The package's own copy of `rel` (schemas/…, docs/…), as a path from the working directory. */
export function packageFile(rel: string): string | undefined {
  // through node_modules when installed there (a symlinked install has another real path)
  const installed = resolve('node_modules/pinbot', rel);
  if (existsSync(installed)) return installed;
  const own = resolve(import.meta.dirname, '../..', rel);
  return existsSync(own) ? own : undefined;
}

/**
 * What the `# yaml-language-server: $schema=` line of a file in `fromDir` points at: the
 * project's own `schemas/` (written by `pinbot schemas`, with its plugins), else the package's
 * (`node_modules/pinbot/schemas/…` in a project made by `pinbot init`).
 *
 * @example schemaRef('scenario.schema.json', 'scenarios') // '../node_modules/pinbot/schemas/scenario.schema.json'
 */
export function schemaRef(name: 'bot.schema.json' | 'scenario.schema.json', fromDir: string): string | undefined {
  const file = existsSync(resolve('schemas', name)) ? resolve('schemas', name) : packageFile(`schemas/${name}`);
  return file ? relative(resolve(fromDir), file).split('\\').join('/') : undefined;
}

/** The first line of a scenario file written in `fromDir`: its schema, for an editor. */
export function scenarioSchemaLine(fromDir: string): string {
  const ref = schemaRef('scenario.schema.json', fromDir) ?? '../schemas/scenario.schema.json';
  return `# yaml-language-server: $schema=${ref}\n`;
}
