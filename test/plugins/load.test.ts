import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { formatPluginProblem } from '../../src/plugin-api/collect.js';
import { createRegistry } from '../../src/runtime/registry.js';
import { loadBot } from '../../src/runtime/define/loader.js';
import { buildRegistry, type ProjectRegistry } from '../../src/services/registry.js';
import { formatProblem } from '../../src/util/yaml-errors.js';
import { tempDir } from '../helpers/api.js';

/**
 * Bad plugins get one clear message each — the file (and line where there is one) and what to
 * do — and change nothing else: the good plugin beside them loads, and bots using it validate.
 */

const good = (name: string, extra = '') => `export default {
  name: '${name}', version: '1.0.0', pinbot: '^0.1.0',${extra}
  actions: { hi: { schema: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] }, run: async () => ({ ok: true }) } },
};
`;

const files: Record<string, string> = {
  'good.ts': good(
    'good',
    "\n  configSchema: { type: 'object', properties: { word: { type: 'string', default: 'thanks' } } },",
  ),
  'syntax.ts': "export default {\n  name: 'syntax',\n  run() {}\n  oops here\n};\n",
  'syntax_js.js': "export default {\n  name: 'syntax_js',\n  oops here\n};\n",
  'nodefault.ts': "export const plugin = { name: 'nodefault' };\n",
  'shape.ts':
    "export default { name: 'Bad Name', version: 'one', pinbot: 'whatever', actions: " +
    '{ give: { run: 5 } }, actoins: {} };\n',
  'entries.ts':
    "export default { name: 'vip', version: '1.2.0', pinbot: '^0.1.0', conditions: { " +
    "is_vip: { schema: 'nope', run: () => true } } };\n",
  'clash_a.ts': good('clash'),
  'clash_b.ts': good('clash'),
  'reserved.ts': good('sender'),
  'future.ts': good('future').replace("pinbot: '^0.1.0'", "pinbot: '^9.0.0'"),
  'strict.ts': good(
    'strict',
    "\n  configSchema: { type: 'object', required: ['questions'], properties: { questions: { type: 'array' } } },",
  ),
  'throws.ts': "throw new Error('top-level boom');\nexport default {};\n",
  'helper.test.ts': 'this is not loaded: tests are skipped',
};

const config = `plugins:
  packages: [pinbot-plugin-missing, pinbot-plugin-here]
  config:
    strict:
      questions: not-a-list
    nobody: {}
`;

let dir: string;
let cleanup: () => void;
let registry: ProjectRegistry;
let lines: string[];

beforeAll(async () => {
  ({ dir, cleanup } = tempDir('pinbot-plugins-'));
  mkdirSync(join(dir, 'plugins'));
  for (const [f, t] of Object.entries(files)) writeFileSync(join(dir, 'plugins', f), t);
  const pkg = join(dir, 'node_modules', 'pinbot-plugin-here');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(
    join(pkg, 'package.json'),
    JSON.stringify({ name: 'pinbot-plugin-here', type: 'module', exports: { '.': { import: './main.js' } } }),
  );
  writeFileSync(join(pkg, 'main.js'), good('here'));
  writeFileSync(join(dir, 'config.yaml'), config);
  registry = await buildRegistry({
    config: loadConfig(join(dir, 'config.yaml')),
    log: pino({ level: 'silent' }),
    projectDir: dir,
    hostVersion: '0.1.0',
  });
  lines = registry.plugins!.problems.map(formatPluginProblem).map((l) => l.replaceAll(dir + '/', ''));
});
afterAll(() => cleanup());

const line = (start: string) =>
  lines.find((l) => l.startsWith(start)) ?? `no problem starting ${start} in:\n${lines.join('\n')}`;

describe('loading plugins', () => {
  it('loads the good plugins from the folder and from npm, and registers their entries namespaced', () => {
    expect(registry.plugins!.instances.map((i) => i.name)).toEqual(['clash', 'good', 'here']);
    expect([...registry.actions.keys()].filter((n) => n.includes('.'))).toEqual(['clash.hi', 'good.hi', 'here.hi']);
  });

  it('a syntax error names file:line:col (TypeScript) or file:line (JavaScript)', () => {
    expect(line('plugins/syntax.ts')).toMatch(
      /^plugins\/syntax\.ts:4:\d+: syntax error: Expected .* but found .* — fix the code/,
    );
    expect(line('plugins/syntax_js.js')).toMatch(/^plugins\/syntax_js\.js:3(:\d+)?: syntax error: \S.* — fix the code/);
  });

  it('a module without a default export says what to write', () => {
    expect(line('plugins/nodefault.ts')).toBe(
      'plugins/nodefault.ts: the module has no default export — end it with `export ' +
        'default definePlugin({ name, version, pinbot, … })` (import { definePlugin } ' +
        'from "pinbot/plugin")',
    );
  });

  it('a wrong shape lists every problem', () => {
    const l = line('plugins/shape.ts');
    expect(l).toContain('unknown key "actoins"');
    expect(l).toContain('name must be lower-case letters');
    expect(l).toContain('version must be a semver version like "1.0.0"; found "one"');
    expect(l).toContain('pinbot must be a semver range');
    expect(l).toContain('actions.give.run must be a function; found a number');
    expect(l).toContain('actions.give.schema must be a JSON Schema object');
  });

  it('a plugin whose only problem is an entry is listed by its name, and a bot using it is told why', () => {
    const report = registry.plugins!.status().find((p) => p.source.endsWith('entries.ts'))!;
    expect(report).toMatchObject({
      name: 'vip',
      version: '1.2.0',
      status: 'invalid',
      message: expect.stringContaining('conditions.is_vip.schema must be a JSON Schema object'),
    });
    const bot =
      `name: b\nas: alice\nrules:\n  - on: message.received\n    if: { vip.is_vip: ` + `true }\n    do: [{ log: x }]\n`;
    expect(loadBot('b.yaml', bot, { registry }).problems.map(formatProblem)).toEqual([
      expect.stringMatching(
        new RegExp(
          String.raw`^b\.yaml:5:11: rules\.0\.if\.vip\.is_vip: unknown condition ` +
            String.raw`"vip\.is_vip" — the plugin vip \(.*entries\.ts\) did not load: not a ` +
            String.raw`valid plugin: .*conditions\.is_vip\.schema must be a JSON Schema ` +
            String.raw`object`,
        ),
      ),
    ]);
  });

  it('a name clash, a reserved name and a host range mismatch are refused, naming both sides', () => {
    expect(line('plugins/clash_b.ts')).toBe(
      'plugins/clash_b.ts: the name clash is already taken by the plugin of ' +
        'plugins/clash_a.ts — two plugins may not have the same name: rename one, or ' +
        'remove one',
    );
    expect(line('plugins/reserved.ts')).toMatch(
      /^plugins\/reserved\.ts: the name sender is taken by the field sender of .* events/,
    );
    expect(line('plugins/future.ts')).toBe(
      'plugins/future.ts: future 1.0.0 needs pinbot ^9.0.0, and this is pinbot 0.1.0 ' +
        '— use a version of future made for pinbot 0.1.0, or a pinbot that ^9.0.0 ' +
        'accepts',
    );
  });

  it('settings that fail the configSchema name config.yaml:line:col; settings for no plugin are a warning', () => {
    expect(line('config.yaml:5')).toBe(
      'config.yaml:5:18: plugins.config.strict.questions: expected an array — found ' +
        '"not-a-list"; the settings of plugin strict (plugins/strict.ts)',
    );
    expect(line('config.yaml:6')).toBe(
      'config.yaml:6:5: plugins.config.nobody: no plugin named nobody is loaded — ' +
        'check the name, or remove these settings',
    );
  });

  it('top-level code that throws, and a package that is not installed, say what to do', () => {
    expect(line('plugins/throws.ts')).toBe(
      'plugins/throws.ts:1:7: loading it threw: top-level boom — its top-level code ' +
        'must not throw; move work into setup()',
    );
    expect(line('npm pinbot-plugin-missing')).toMatch(
      /^npm pinbot-plugin-missing: the npm package pinbot-plugin-missing is not installed in .* — run `npm install pinbot-plugin-missing`, or remove it from plugins.packages in config.yaml$/,
    );
  });

  it('skips test files, and a bot naming a plugin that did not load is told why', () => {
    expect(lines.some((l) => l.includes('helper.test'))).toBe(false);
    const bot =
      'name: b\nas: x\nrules:\n  - on: message.received\n    do:\n      - good.hi: { ' +
      'to: me }\n      - strict.hi: { to: me }\n';
    const problems = loadBot('b.yaml', bot, { registry })
      .problems.map(formatProblem)
      .map((l) => l.replaceAll(dir + '/', ''));
    expect(problems).toEqual([
      expect.stringMatching(
        new RegExp(
          String.raw`^b\.yaml:7:9: rules\.0\.do\.1\.strict\.hi: unknown action ` +
            String.raw`"strict\.hi" — the plugin strict \(plugins\/strict\.ts\) did not ` +
            String.raw`load: invalid settings: plugins\.config\.strict\.questions: expected ` +
            String.raw`an array$`,
        ),
      ),
    ]);
  });

  it('a bot naming a plugin that is not loaded is told plugins load at start (a file added while serve runs)', () => {
    // `pinbot plugins new dice` while `npm start` runs: the bot reload sees dice.greet, the
    // plugins loaded at start do not have it; the hint must say to restart, not list built-ins
    const bot = 'name: b\nas: x\nrules:\n  - on: message.received\n    do:\n      - dice.greet: { name: x }\n';
    expect(loadBot('b.yaml', bot, { registry: createRegistry().freeze() }).problems.map(formatProblem)).toEqual([
      'b.yaml:6:9: rules.0.do.0.dice.greet: unknown action "dice.greet" — no plugin ' +
        'named dice is loaded — plugins load when pinbot starts (from plugins/ and ' +
        'plugins.packages): restart a running server after adding dice, or check the ' +
        'name',
    ]);
  });

  it('safe mode (serve --safe) loads no plugin: bots using one are invalid', async () => {
    const safe = await buildRegistry({
      config: loadConfig(join(dir, 'config.yaml')),
      log: pino({ level: 'silent' }),
      projectDir: dir,
      safe: true,
    });
    expect(safe.plugins).toBeUndefined();
    expect([...safe.actions.keys()].filter((n) => n.includes('.'))).toEqual([]);
    const bot = 'name: b\nas: x\nrules:\n  - on: message.received\n    do:\n      - good.hi: { to: me }\n';
    expect(loadBot('b.yaml', bot, { registry: safe }).problems.map(formatProblem)).toEqual([
      expect.stringContaining(
        'unknown action "good.hi" — safe mode (serve --safe) loads no plugins: start pinbot without --safe',
      ),
    ]);
  });

  it('schemas of plugin actions are in the bot schema (editors complete them)', () => {
    const bad = 'name: b\nas: x\nrules:\n  - on: message.received\n    do:\n      - good.hi: { too: me }\n';
    expect(loadBot('b.yaml', bad, { registry }).problems.map(formatProblem)).toEqual([
      expect.stringContaining('b.yaml:6:18: rules.0.do.0.good.hi: missing required key "to"'),
    ]);
  });
});
