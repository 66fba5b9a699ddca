import { resolve } from 'node:path';
import { botSchema } from './bot-schema.js';
import type { Registry } from '../contract/registry.js';

/**
 * The text of schemas/bot.schema.json for a registry: built-ins and the project's plugins
 * (`pinbot schemas` builds the registry with buildRegistry, so editors complete plugin entries).
 */
export function botSchemaText(registry: Registry): string {
  return JSON.stringify(botSchema(registry), null, 2) + '\n';
}

/** Path of the committed schema. */
export const BOT_SCHEMA_FILE = resolve(import.meta.dirname, '../../../schemas/bot.schema.json');
