import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findPlainObjectLookups } from './plain-object-keys.js';

/** Every module of plugins/ (the examples users copy), helpers included, tests left out. */
function pluginSources(dir = 'plugins'): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? pluginSources(join(dir, e.name))
      : /\.(?:ts|mts)$/.test(e.name) && !/\.test\.|\.d\.ts$/.test(e.name)
        ? [join(dir, e.name)]
        : [],
  );
}

/** How webhook_in looked its per-bot key up before (issue 21, item 1): `secrets[bot]`, bot from the URL. */
const OLD_WEBHOOK_IN = `import { definePlugin } from 'pinbot/plugin';
export default definePlugin({
  name: 'old_in', version: '1.0.0', pinbot: '^0.1.0',
  configSchema: { type: 'object', additionalProperties: false, properties: { secret: { type: 'string' }, secrets: { type: 'object', additionalProperties: { type: 'string' } } } },
  setup(ctx) {
    ctx.route('POST', '/:bot', async (req) => {
      const bot = req.params.bot!;
      const secret = ctx.config.secrets?.[bot] ?? ctx.config.secret;
      const bare: Record<string, number> = Object.create(null);
      const rows = [1, 2, 3];
      const which = 'a' as 'a' | 'b';
      const fine = { a: 1, b: 2 };
      return { body: { secret, n: bare[bot], first: rows[Number(bot)], one: fine[which]} };
    });
  },
});
`;

describe('plugins/ look up keys from outside only in Maps or objects without a prototype', () => {
  const files = pluginSources();
  // one program for both (type-checking is the slow part)
  const found = findPlainObjectLookups(files, { 'plugins/_old_webhook_in.ts': OLD_WEBHOOK_IN });

  it('no example plugin indexes a plain object with a key that may be any string', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'plugins/webhook_in.ts',
        'plugins/faq.ts',
        'plugins/karma.ts',
        'plugins/webhook.ts',
        'plugins/lib/webhook-signature.ts',
      ]),
    );
    expect(found.filter((f) => !f.where.startsWith('plugins/_old_'))).toEqual([]);
  });

  it('the check finds the lookup that let anyone quarantine webhook_in, and passes the safe ones beside it', () => {
    expect(found.filter((f) => f.where.startsWith('plugins/_old_'))).toEqual([
      { where: 'plugins/_old_webhook_in.ts:8:22', text: 'ctx.config.secrets?.[bot]' },
    ]);
  });
});
