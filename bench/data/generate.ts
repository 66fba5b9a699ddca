// Generates one benchmark data set into a directory: node bin/run-ts.js bench/data/generate.ts NAME DIR PARAMS_JSON
// Run by bench/harness/dataset.ts in its own process, so the harness never holds a big store.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
// The route table imports every domain module, so their hooks (e.g. a new user's trial
// subscription) run here exactly as they do in the server.
import '../../src/api/routes.js';
import { generators } from './generators.js';

const [name, dir, paramsJson] = process.argv.slice(2);
const generator = name ? generators[name] : undefined;
if (!generator || !dir) {
  console.error(`usage: generate.ts NAME DIR PARAMS_JSON (NAME: ${Object.keys(generators).join(', ')})`);
  process.exit(2);
}
const meta = await generator(join(dir, 'data'), JSON.parse(paramsJson ?? '{}'));
writeFileSync(join(dir, 'meta.json'), JSON.stringify(meta));
