/**
 * `npm run openapi-examples`: records the examples of /openapi.json from a real server run and
 * writes src/api/openapi/examples.json. Run it after changing a route; commit the file.
 */
import { writeFileSync } from 'node:fs';
import { recordExamples } from './record-examples.js';

const recorded = await recordExamples();
const file = new URL('../../src/api/openapi/examples.json', import.meta.url);
writeFileSync(file, `${JSON.stringify(recorded, null, 2)}\n`);
const calls = Object.values(recorded.operations).reduce((n, c) => n + c.length, 0);
console.log(
  `wrote ${calls} recorded calls of ${Object.keys(recorded.operations).length} ` +
    `operations to src/api/openapi/examples.json`,
);
