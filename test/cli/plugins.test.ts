import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/api.js';
import { ROOT } from '../helpers/spawn.js';

/**
 * The plugin author's path in a project of their own (pinbot installed as a dependency):
 * `pinbot plugins new hello` → `pinbot bots validate` knows hello.* → the scaffolded test passes;
 * `pinbot plugins list` says what each plugin is and why a broken one did not load.
 */

let dir: string;
let cleanup: () => void;

const pinbot = (...args: string[]) => {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/pinbot.js'), ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  return { code: r.status, out: r.stdout + r.stderr };
};

beforeAll(() => {
  ({ dir, cleanup } = tempDir('pinbot-project-'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(ROOT, join(dir, 'node_modules', 'pinbot'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'my-bots', type: 'module', private: true }));
});
afterAll(() => cleanup());

describe('pinbot plugins', () => {
  it('new scaffolds a plugin and its test; it refuses a name in use or not allowed', () => {
    const r = pinbot('plugins', 'new', 'hello');
    expect(r.code).toBe(0);
    expect(r.out).toContain('created plugins/hello.ts (the plugin: actions hello.greet, hello.welcome)');
    expect(r.out).toContain('created plugins/hello.test.ts');
    expect(readFileSync(join(dir, 'plugins/hello.ts'), 'utf8')).toContain("pinbot: '^0.1.0'");
    expect(pinbot('plugins', 'new', 'hello')).toEqual({
      code: 1,
      out: 'pinbot: plugins/hello.ts exists already; pick another name, or remove it first\n',
    });
    expect(pinbot('plugins', 'new', 'Hello-World').out).toContain(
      '"Hello-World" cannot name a plugin: use lower-case letters, digits and _',
    );
  });

  it('bots validate knows hello.* (and suggests it for a typo)', () => {
    mkdirSync(join(dir, 'bots'), { recursive: true });
    writeFileSync(
      join(dir, 'bots/greeter.yaml'),
      'name: greeter\nas: Greeter\ncreate_user: true\nrules:\n  - on: ' +
        'message.received\n    do:\n      - hello.greet: { name: "{{ ' +
        'event.sender.display_name }}" }\n',
    );
    writeFileSync(
      join(dir, 'bots/typo.yaml'),
      'name: typo\nas: Greeter\nrules:\n  - on: message.received\n    do:\n      - hello.gret: { name: x }\n',
    );
    const r = pinbot('bots', 'validate');
    expect(r.out).toContain('ok  ' + join(dir, 'bots/greeter.yaml') + ' (greeter)');
    expect(r.out).toContain(
      'bots/typo.yaml:6:9: rules.0.do.0.hello.gret: unknown action "hello.gret" — did you mean "hello.greet"?',
    );
    expect(r.code).toBe(1);
  });

  it('list shows each plugin, and a broken one with file:line:col and what to do', () => {
    writeFileSync(
      join(dir, 'plugins/broken.ts'),
      "import { definePlugin } from 'pinbot/plugin';\nexport default definePlugin({\n " +
        " name: 'broken',\n  oops: here\n  version: '1.0.0',\n});\n",
    );
    const r = pinbot('plugins', 'list');
    // a plugin that did not load fails the command (a CI job sees it), naming it
    expect(r.code).toBe(1);
    expect(r.out).toMatch(
      /^\? +invalid +plugins\/broken\.ts\n {4}why: syntax error: Expected "}" but found "version"/m,
    );
    expect(r.out).toMatch(/^hello +0\.1\.0 +loaded +plugins\/hello\.ts\n {4}actions: hello\.greet, hello\.welcome$/m);
    expect(r.out).toContain(
      'plugins/broken.ts:5:3: syntax error: Expected "}" but found "version" — fix ' +
        'the code; the other plugins and every bot run meanwhile',
    );
    expect(r.out).toContain(
      'pinbot: 1 plugin did not load: plugins/broken.ts: syntax error: Expected "}" but found "version"',
    );
    expect(pinbot('plugins', 'list', '--json').code).toBe(1);
  });

  it('schemas writes nothing and fails while a plugin does not load, naming it', () => {
    const r = pinbot('schemas');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^pinbot: nothing written: 1 plugin did not load: plugins\/broken\.ts: syntax error/m);
    expect(existsSync(join(dir, 'schemas/bot.schema.json'))).toBe(false);
  });

  it('a bot using an entry of a plugin that did not load is told which plugin and why', () => {
    writeFileSync(
      join(dir, 'bots/roller.yaml'),
      'name: roller\nas: Roller\nrules:\n  - on: message.received\n    do:\n      - broken.roll: { max: 6 }\n',
    );
    const r = pinbot('bots', 'validate');
    expect(r.out).toContain(
      'bots/roller.yaml:6:9: rules.0.do.0.broken.roll: unknown action "broken.roll" — ' +
        'the plugin in plugins/broken.ts (broken, by its file name) did not load: ' +
        'syntax error: Expected "}" but found "version"',
    );
    expect(r.code).toBe(1);
  });

  it('the scaffolded test passes', () => {
    const r = spawnSync(
      process.execPath,
      [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', 'plugins/hello.test.ts'],
      { cwd: dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', CI: '1' } },
    );
    expect(r.stdout + r.stderr).toMatch(/Tests +2 passed/);
    expect(r.status).toBe(0);
  }, 60_000);
});
