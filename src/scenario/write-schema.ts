import { resolve } from 'node:path';
import { scenarioSchema } from './schema.js';
import { builtinSteps } from './steps/index.js';

/** The committed text of schemas/scenario.schema.json (built-in step kinds). */
export function scenarioSchemaText(): string {
  return JSON.stringify(scenarioSchema(builtinSteps()), null, 2) + '\n';
}

/** Path of the committed schema. */
export const SCENARIO_SCHEMA_FILE = resolve(import.meta.dirname, '../../schemas/scenario.schema.json');
