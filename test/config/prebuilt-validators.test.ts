import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { configSchema } from '../../src/config/schema.js';
import { createRegistry } from '../../src/runtime/registry.js';
import { botSchema } from '../../src/runtime/define/bot-schema.js';
import { newAjv, schemaHash, standaloneModule, validatorFor } from '../../src/util/prebuilt-validator.js';
import { ROOT } from '../helpers/spawn.js';

/**
 * The validators `npm run build` generates (ajv standalone code of the built-in bot schema and of
 * config.yaml's, issue 33) answer exactly as compiling the schema at start does — the verdict,
 * every error, the defaults filled in — and are used only for the schema text they were made from.
 */
// inside the checkout, as dist/validators/ is: the generated code requires ajv's runtime helpers
mkdirSync(join(ROOT, 'node_modules', '.cache'), { recursive: true });
const tmp = { dir: mkdtempSync(join(ROOT, 'node_modules', '.cache', 'pinbot-validators-')) };
afterAll(() => rmSync(tmp.dir, { recursive: true, force: true }));
const dir = pathToFileURL(join(tmp.dir, 'validators') + '/');
mkdirSync(dir, { recursive: true });

const SCHEMAS = { bot: JSON.stringify(botSchema(createRegistry())), config: JSON.stringify(configSchema) } as const;
for (const [name, text] of Object.entries(SCHEMAS))
  writeFileSync(new URL(`${name}.cjs`, dir), standaloneModule(name as keyof typeof SCHEMAS, text));

/** What a validator says of `data` (run on a copy: the config validator fills defaults in). */
function verdict(fn: ReturnType<typeof validatorFor>, data: unknown) {
  const copy = structuredClone(data);
  const ok = fn(copy);
  const errors = (fn.errors ?? []).map((e) => ({
    instancePath: e.instancePath,
    keyword: e.keyword,
    params: e.params,
    message: e.message,
    schemaPath: e.schemaPath,
  }));
  return { ok, errors, filled: copy };
}

const bots = readdirSync(join(ROOT, 'bots'))
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => parse(readFileSync(join(ROOT, 'bots', f), 'utf8')) as Record<string, unknown>);
const BOT_CASES: unknown[] = [
  ...bots,
  ...bots.map((b) => ({ ...b, nmae: 'typo' })),
  ...bots.map((b) => ({ ...b, rules: 'not a list' })),
  ...bots.map((b) => ({ ...b, name: 'Upper Case!' })),
  { name: 'x', rules: [{ on: 'message.received', do: [{ reply: 42 }, { send_money: { amount: -1 } }, { nope: {} }] }] },
  { rules: [] },
  null,
  [],
];
const CONFIG_CASES: unknown[] = [
  {},
  parse(readFileSync(join(ROOT, 'config.yaml'), 'utf8')) ?? {},
  { server: { port: 'eighty' } },
  { rate_limits: { general: { limit: -5 } }, unknown_key: true },
  { store: { driver: 'mysql' } },
  { bots: { dir: 7, env_allow: 'HOME' } },
  [],
];

describe.each([
  ['bot', BOT_CASES],
  ['config', CONFIG_CASES],
] as const)('the prebuilt %s validator', (name, cases) => {
  const prebuilt = validatorFor(name, SCHEMAS[name], dir);
  const compiled = newAjv(name).compile(JSON.parse(SCHEMAS[name]) as object);

  it('is the generated one for this schema text', () => {
    expect((prebuilt as unknown as { schemaHash?: string }).schemaHash).toBe(schemaHash(SCHEMAS[name]));
  });

  it('gives the same verdict, errors and filled-in defaults as compiling the schema', () => {
    for (const data of cases) expect(verdict(prebuilt, data)).toEqual(verdict(compiled, data));
    expect(cases.some((d) => !verdict(prebuilt, d).ok)).toBe(true); // the cases do reach errors
  });

  it('is not used for another schema text (plugins add entries): that one is compiled', () => {
    const other = JSON.stringify({ ...JSON.parse(SCHEMAS[name]), description: 'changed' });
    const fn = validatorFor(name, other, dir);
    expect((fn as unknown as { schemaHash?: string }).schemaHash).toBeUndefined();
    expect(verdict(fn, cases[0]).ok).toBe(verdict(prebuilt, cases[0]).ok);
  });
});

it('without generated validators (run from src/), the schema is compiled', () => {
  const fn = validatorFor('bot', SCHEMAS.bot, pathToFileURL(join(tmp.dir, 'none') + '/'));
  expect((fn as unknown as { schemaHash?: string }).schemaHash).toBeUndefined();
  expect(fn(bots[0])).toBe(true);
});
