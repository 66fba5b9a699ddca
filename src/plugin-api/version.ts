import { readFileSync } from 'node:fs';

/** The version of this pinbot (package.json), which plugins' `pinbot` ranges are checked against. */
export const PINBOT_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
