// `npm run schemas` (= `pinbot schemas`): writes the JSON Schemas of user-written files
// (schemas/*.schema.json) for this project, its plugins included.
import { loadConfig } from '../config/load.js';
import { createLogger } from '../log.js';
import { writeSchemas } from './schemas.js';

const config = loadConfig(process.env.PINBOT_CONFIG ?? 'config.yaml');
const written = await writeSchemas({ config, log: createLogger({ level: 'warn' }) });
if (Array.isArray(written))
  for (const w of written) process.stdout.write(`${w.changed ? 'wrote' : 'up to date:'} ${w.file}\n`);
else {
  process.stderr.write(
    `nothing written: plugins did not load: ${written.invalid.map((p) => `${p.source}: ${p.message}`).join('; ')}\n`,
  );
  process.exitCode = 1;
}
