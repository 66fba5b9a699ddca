/**
 * What a bot name can be: it names files (`DATA/bots/traces/NAME.jsonl`, key files), so lower
 * case letters, digits, `-` and `_`, starting with a letter or digit, at most 64 characters.
 * The one definition: the bot schema, the console, the key vault and the trace readers use it.
 */
export const BOT_NAME_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$';

/** `BOT_NAME_PATTERN` as a regex. */
export const BOT_NAME = new RegExp(BOT_NAME_PATTERN);

/** Whether `name` can name a bot. */
export const isBotName = (name: string): boolean => BOT_NAME.test(name);
