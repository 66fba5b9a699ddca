import { resolve } from 'node:path';
import { botSchema } from './bot-schema.js';
import { createRegistry } from './builtins.js';

/** The committed text of schemas/bot.schema.json (built-in registry). */
export function botSchemaText(): string {
  return JSON.stringify(botSchema(createRegistry()), null, 2) + '\n';
}

/** Path of the committed schema. */
export const BOT_SCHEMA_FILE = resolve(import.meta.dirname, '../../schemas/bot.schema.json');
