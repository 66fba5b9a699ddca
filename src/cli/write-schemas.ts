// `npm run schemas`: writes the JSON Schemas of user-written files (schemas/*.schema.json).
import { writeFileSync } from 'node:fs';
import { BOT_SCHEMA_FILE, botSchemaText } from '../runtime/write-schema.js';
import { SCENARIO_SCHEMA_FILE, scenarioSchemaText } from '../scenario/write-schema.js';

writeFileSync(BOT_SCHEMA_FILE, botSchemaText());
process.stdout.write(`wrote ${BOT_SCHEMA_FILE}\n`);
writeFileSync(SCENARIO_SCHEMA_FILE, scenarioSchemaText());
process.stdout.write(`wrote ${SCENARIO_SCHEMA_FILE}\n`);
