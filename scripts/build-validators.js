// Writes ajv's standalone validation code of the built-in schemas into DIST/validators/NAME.cjs
// (with the hash of the schema text it was generated from), so the CLI need not compile them at
// every start (src/util/prebuilt-validator.ts). Run by scripts/build.js after tsc.
// node scripts/build-validators.js DIST
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = resolve(process.argv[2] ?? 'dist');
const load = (file) => import(pathToFileURL(join(dist, file)).href);
const { standaloneModule } = await load('util/prebuilt-validator.js');
const { configSchema } = await load('config/schema.js');
const { createRegistry } = await load('runtime/registry.js');
const { botSchema } = await load('runtime/define/bot-schema.js');

const schemas = { config: configSchema, bot: botSchema(createRegistry()) };
mkdirSync(join(dist, 'validators'), { recursive: true });
for (const [name, schema] of Object.entries(schemas)) {
  writeFileSync(join(dist, 'validators', `${name}.cjs`), standaloneModule(name, JSON.stringify(schema)));
}
