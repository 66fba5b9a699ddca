import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/api.js';
import { pinbotSpec } from '../../src/cli/init.js';
import { ROOT } from '../helpers/spawn.js';

/**
 * `pinbot init my-bots` in an empty folder, as a new user runs it (no terminal: stdin closed):
 * the project's files, each script and hint naming what exists, the bot valid and the scenario
 * passing with pinbot installed as the project's dependency; a second run refuses and changes
 * nothing; --force adds only what is missing.
 */

let root: string;
let cleanup: () => void;
let project: string;

const run = (cwd: string, ...args: string[]) => {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/pinbot.js'), ...args], {
    cwd,
    input: '',
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  return { code: r.status, out: r.stdout + r.stderr };
};
const read = (path: string) => readFileSync(join(project, path), 'utf8');

const FILES = [
  '.github/workflows/pinbot.yml',
  '.gitignore',
  'bots/welcome.yaml',
  'config.yaml',
  'package.json',
  'plugins/hello.test.ts',
  'plugins/hello.ts',
  'README.md',
  'scenarios/welcome.yaml',
  'tsconfig.json',
];

beforeAll(() => {
  ({ dir: root, cleanup } = tempDir('pinbot-init-'));
  project = join(root, 'my-bots');
});
afterAll(() => cleanup());

describe('pinbot init', () => {
  it('makes a project in a new folder, asking nothing', () => {
    const r = run(root, 'init', 'my-bots');
    expect(r.code).toBe(0);
    for (const f of FILES) expect(r.out).toContain(`created ${f}\n`);
    expect(r.out).toContain('Next:\n  cd my-bots\n  npm install\n  npm test');
    for (const f of FILES) expect(existsSync(join(project, f)), f).toBe(true);
  });

  it('package.json: an ES module project depending on this pinbot, with the four scripts', () => {
    const pkg = JSON.parse(read('package.json'));
    const own = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    // run from this checkout: `npm install` in the project links it (from a tarball: the tarball)
    expect(pkg).toMatchObject({
      name: 'my-bots',
      type: 'module',
      private: true,
      dependencies: { pinbot: `file:${relative(project, ROOT).replace(/\/$/, '')}` },
    });
    expect(own.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(pkg.scripts).toEqual({
      start: 'pinbot serve',
      test: 'vitest run && pinbot scenario run scenarios/',
      validate: 'pinbot bots validate',
      scenarios:
        'pinbot scenario run scenarios/ --reporter junit=reports/scenarios.xml ' +
        '--coverage reports/coverage.html --coverage reports/coverage.json',
    });
    expect(Object.keys(pkg.devDependencies).sort()).toEqual(['@types/node', 'typescript', 'vitest']);
    expect(JSON.parse(read('tsconfig.json')).compilerOptions.strict).toBe(true);
  });

  it('git ignores data and keys; CI runs what package.json names; no bot reads the environment', () => {
    const ignore = read('.gitignore').split('\n');
    for (const line of ['node_modules/', 'data/', 'keys.yaml', '*.keys.yaml', '.env']) expect(ignore).toContain(line);
    // the tarball CI installs pinbot from, while pinbot is not on the registry (getting-started.md "CI")
    expect(ignore.indexOf('!vendor/*.tgz')).toBeGreaterThan(ignore.indexOf('*.tgz'));
    const ci = read('.github/workflows/pinbot.yml');
    const scripts = Object.keys(JSON.parse(read('package.json')).scripts);
    for (const m of ci.matchAll(/npm run (\w+)/g)) expect(scripts).toContain(m[1]);
    expect(ci).toContain('npm run validate');
    expect(ci).toContain('npm run scenarios');
    expect(ci).toContain('path: reports/scenarios.xml');
    // the coverage page the scenarios script writes is kept as an artifact
    expect(JSON.parse(read('package.json')).scripts.scenarios).toContain('--coverage reports/coverage.html');
    expect(ci).toMatch(/name: scenario-coverage\n[^]*reports\/coverage\.html/);
    expect(read('bots/welcome.yaml')).not.toContain('${env:');
  });

  it('editor schema lines point at the schemas the installed package holds', () => {
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(ROOT, join(project, 'node_modules', 'pinbot'), 'dir');
    for (const f of ['bots/welcome.yaml', 'scenarios/welcome.yaml']) {
      const m = /^# yaml-language-server: \$schema=(\S+)$/m.exec(read(f));
      expect(m?.[1], f).toMatch(/^\.\.\/node_modules\/pinbot\/schemas\/(bot|scenario)\.schema\.json$/);
      expect(existsSync(resolve(project, dirname(f), m![1]!)), m![1]).toBe(true);
    }
  });

  it('its bot is valid and its scenario passes, with a JUnit report where CI looks', () => {
    const v = run(project, 'bots', 'validate');
    expect(v.out).toContain('1 of 1 bot file(s) valid');
    expect(v.code).toBe(0);
    const s = run(project, 'scenario', 'run', 'scenarios/', '--reporter', 'junit=reports/scenarios.xml');
    expect(s.out).toContain('1 scenario: 1 passed');
    expect(s.code).toBe(0);
    expect(read('reports/scenarios.xml')).toContain('the welcome bot answers hello');
  }, 60_000);

  it('plugins new names the commands and files of this project', () => {
    const r = run(project, 'plugins', 'new', 'dice');
    expect(r.code).toBe(0);
    // `npm test -- FILE` would hand FILE to the scenario runner of this project's test script
    expect(r.out).toContain('(its test: npx vitest run plugins/dice.test.ts)');
    expect(r.out).toContain('# yaml-language-server: $schema=../node_modules/pinbot/schemas/bot.schema.json');
    expect(r.out).toContain(
      'Then: npx pinbot bots validate, and npm start (restart it if it is running: ' +
        'plugins load at start). See node_modules/pinbot/docs/plugins.md.',
    );
    expect(r.out).not.toContain('warning:');
    rmSync(join(project, 'plugins/dice.ts'));
    rmSync(join(project, 'plugins/dice.test.ts'));
  });

  it('refuses to write over a project, naming the files, and changes nothing', () => {
    writeFileSync(join(project, 'config.yaml'), 'log: { level: warn }\n');
    const r = run(root, 'init', 'my-bots');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(
      new RegExp(
        String.raw`^pinbot: nothing written: \.github\/workflows\/pinbot\.yml, ` +
          String.raw`\.gitignore, bots\/welcome\.yaml, config\.yaml, .* exist already in ` +
          String.raw`\.\/my-bots\. Run again with --force to add only the missing files`,
      ),
    );
    expect(r.out.trim().split('\n')).toHaveLength(1);
    expect(read('config.yaml')).toBe('log: { level: warn }\n');
  });

  it('--force adds what is missing and keeps every existing file as it is', () => {
    rmSync(join(project, 'scenarios'), { recursive: true });
    rmSync(join(project, 'plugins/hello.test.ts'));
    const r = run(project, 'init', '--force');
    expect(r.code).toBe(0);
    expect(r.out).toContain('created plugins/hello.test.ts\ncreated scenarios/welcome.yaml\n');
    expect(r.out).toContain('kept    config.yaml (exists)');
    expect(r.out).not.toContain('cd ');
    expect(read('config.yaml')).toBe('log: { level: warn }\n');
    expect(read('scenarios/welcome.yaml')).toContain('name: the welcome bot answers hello');
    expect(run(project, 'init', '--force').out).toContain('nothing to add: every file of a new project is there');
  });

  it('--force in a folder made by npm init says what its package.json lacks', () => {
    const other = join(root, 'existing');
    mkdirSync(other);
    writeFileSync(
      join(other, 'package.json'),
      JSON.stringify({ name: 'existing', type: 'commonjs', scripts: { test: 'echo no tests' } }),
    );
    const r = run(other, 'init', '--force');
    expect(r.code).toBe(0);
    expect(r.out).toContain('kept    package.json (exists)');
    expect(r.out).toContain('  npm pkg set type=module');
    expect(r.out).toContain('  npm pkg set scripts.start="pinbot serve"');
    expect(r.out).not.toContain('scripts.test=');
    expect(r.out).toContain(`  npm install file:${relative(other, ROOT).replace(/\/$/, '')}`);
    expect(JSON.parse(readFileSync(join(other, 'package.json'), 'utf8')).type).toBe('commonjs');
  });

  it('the project asks npm for the pinbot init ran from: the tarball npx installed, else the registry', () => {
    // npx ./pinbot-0.1.0.tgz installs into a folder of its cache whose package.json names the tarball
    const npx = join(root, 'npx-cache', 'a1b2');
    mkdirSync(join(npx, 'node_modules', 'pinbot'), { recursive: true });
    writeFileSync(
      join(npx, 'package.json'),
      JSON.stringify({ dependencies: { pinbot: 'file:../../downloads/pinbot-0.1.0.tgz' } }),
    );
    expect(pinbotSpec(join(root, 'my-bots'), '0.1.0', join(npx, 'node_modules', 'pinbot'))).toBe(
      'file:../downloads/pinbot-0.1.0.tgz',
    );
    // installed from the registry (or globally: no package.json above node_modules)
    writeFileSync(join(npx, 'package.json'), JSON.stringify({ dependencies: { pinbot: '^0.1.0' } }));
    expect(pinbotSpec(join(root, 'my-bots'), '0.1.0', join(npx, 'node_modules', 'pinbot'))).toBe('^0.1.0');
    rmSync(join(npx, 'package.json'));
    expect(pinbotSpec(join(root, 'my-bots'), '0.1.0', join(npx, 'node_modules', 'pinbot'))).toBe('^0.1.0');
  });
});
