import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { botSchemaText } from '../runtime/index.js';
import { scenarioSchemaText } from '../scenario/write-schema.js';
import type { PluginReport } from '../plugin-api/host.js';
import { buildRegistry } from '../services/registry.js';

/**
 * Writes the JSON Schemas of user-written files for this project: `schemas/bot.schema.json`
 * and `schemas/scenario.schema.json` (in the working directory)
 * from the registry of `serve` (built-ins and the project's plugins), so editors complete and
 * check plugin actions too. Returns the files written (unchanged ones are not rewritten), or,
 * writing nothing, the plugins that did not load.
 *
 * @example await writeSchemas({ config: loadConfig('config.yaml'), log });
 */
export async function writeSchemas(o: {
  config: Config;
  log: Logger;
  dir?: string;
}): Promise<Array<{ file: string; changed: boolean }> | { invalid: PluginReport[] }> {
  const registry = await buildRegistry({ config: o.config, log: o.log });
  // a plugin that did not load would be missing from the schema: nothing is written
  const invalid = registry.plugins?.status().filter((p) => p.status === 'invalid') ?? [];
  if (invalid.length) return { invalid };
  const texts: Array<[string, string]> = [
    ['bot.schema.json', botSchemaText(registry)],
    ['scenario.schema.json', scenarioSchemaText()],
  ];
  return texts.map(([name, text]) => {
    const file = resolve(o.dir ?? 'schemas', name);
    let old: string | undefined;
    try {
      old = readFileSync(file, 'utf8');
    } catch {
      old = undefined;
    }
    if (old !== text) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
    }
    return { file, changed: old !== text };
  });
}
