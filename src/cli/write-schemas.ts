// `npm run schemas` (= `pinbot schemas`): writes the JSON Schemas of user-written files
// (schemas/*.schema.json) for this project, its plugins included.
import { loadConfig } from '../config/load.js';
import { createLogger } from '../log.js';
import { writeSchemas } from './schemas.js';

const config = loadConfig(process.env.PINBOT_CONFIG ?? 'config.yaml');
for (const w of await writeSchemas({ config, log: createLogger({ level: 'warn' }) })) process.stdout.write(`${w.changed ? 'wrote' : 'up to date:'} ${w.file}\n`);
