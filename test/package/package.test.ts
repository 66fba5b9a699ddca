import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/api.js';
import { ROOT } from '../helpers/spawn.js';
import { buildInputsHash, distStamp } from '../../scripts/build-inputs.js';

/**
 * The package as a user gets it: a copy of this checkout built with scripts/build.js (what
 * `prepare` runs) into its own folder, so the test never touches dist/ that other tests may
 * read. When the checkout's dist/ was built by that script from exactly the current sources (its
 * stamp, scripts/build-inputs.js: after `npm ci` or `npm run build`), the copy gets a copy of
 * it instead of a second identical build (tsc with declarations: most of this file's CPU). The
 * tarball's list comes from `npm pack --dry-run --json`; the CLI runs from the copy's dist/ (no
 * tsx), in a project of its own.
 */

let tmp: { dir: string; cleanup: () => void };
let pkg: string;

const PUBLIC_ENTRIES = ['dist/index', 'dist/plugin-api/index', 'dist/testing/index'];

/** The paths `npm pack` would put in the tarball of `dir`. */
function packList(dir: string): string[] {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, npm_config_loglevel: 'silent' },
  });
  return (JSON.parse(out) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path).sort();
}

/** Runs the copy's CLI from its dist/ in `cwd`; `hook` logs each tsx module it resolves. */
function pinbot(cwd: string, args: string[]) {
  const hook =
    'data:text/javascript,' +
    encodeURIComponent(
      'export async function resolve(s, c, next) { const r = await next(s, c); if ' +
        "(r.url.includes('/node_modules/tsx/')) console.error('tsx loaded: ' + r.url); " +
        'return r; }',
    );
  const register = `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(hook)})`;
  const r = spawnSync(process.execPath, ['--import', register, join(pkg, 'bin/pinbot.js'), ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, PINBOT_FROM_SOURCE: '', NO_COLOR: '1' },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

beforeAll(() => {
  tmp = tempDir('pinbot-package-');
  pkg = join(tmp.dir, 'pinbot');
  mkdirSync(pkg);
  for (const f of ['package.json', 'README.md', 'bin', 'schemas', 'docs', 'templates', 'CHANGELOG.md', 'LICENSE'])
    if (existsSync(join(ROOT, f))) cpSync(join(ROOT, f), join(pkg, f), { recursive: true });
  // What must never ship, as a checkout may hold it: tests, benches, a test run's data with keys
  for (const [f, text] of Object.entries({
    'test/a.test.ts': 'x',
    'bench/run.ts': 'x',
    'data/bots/keys.json': '{"api_key":"secret"}',
    'keys/bot.key': 'secret',
    '.env': 'KEY=secret',
    'src/index.ts': 'x',
  })) {
    mkdirSync(dirname(join(pkg, f)), { recursive: true });
    writeFileSync(join(pkg, f), text);
  }
  symlinkSync(join(ROOT, 'node_modules'), join(pkg, 'node_modules'), 'dir');
  const stamp = distStamp(ROOT);
  if (existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === buildInputsHash(ROOT))
    cpSync(join(ROOT, 'dist'), join(pkg, 'dist'), { recursive: true });
  else execFileSync(process.execPath, [join(ROOT, 'scripts/build.js'), '--out', join(pkg, 'dist')], { stdio: 'pipe' });
}, 240_000);
afterAll(() => tmp?.cleanup());

// npm pack --dry-run takes 10-40 s on a busy 2-core machine
describe('the tarball', { timeout: 120_000 }, () => {
  it(
    'holds dist/ (JavaScript, declarations, source maps), bin, schemas and docs; no ' + 'tests, benches, data or keys',
    () => {
      const files = packList(pkg);
      for (const e of PUBLIC_ENTRIES) for (const ext of ['.js', '.d.ts', '.js.map']) expect(files).toContain(e + ext);
      expect(files).toContain('dist/api/openapi/examples.json');
      expect(files).toContain('bin/pinbot.js');
      expect(files).toContain('schemas/bot.schema.json');
      expect(files).toContain('templates/project/_gitignore'); // pinbot init's files
      expect(
        files.filter(
          (f) =>
            !/^(dist\/|bin\/pinbot\.js$|schemas\/|docs\/|templates\/project\/|README\.md$|LICENSE$|CHANGELOG\.md$|package\.json$)/.test(
              f,
            ),
        ),
      ).toEqual([]);
      expect(files.filter((f) => /^(test|bench|data|keys|src)\/|\.env$|\.key$|\.test\./.test(f))).toEqual([]);
    },
  );

  it('of this checkout lists only allowed paths', () => {
    const files = packList(ROOT);
    expect(
      files.filter(
        (f) =>
          !/^(dist\/|bin\/pinbot\.js$|schemas\/|docs\/|templates\/project\/|README\.md$|LICENSE$|CHANGELOG\.md$|package\.json$)/.test(
            f,
          ),
      ),
    ).toEqual([]);
  });

  it(
    'exports types and code for pinbot, pinbot/plugin and pinbot/testing; the types ' +
      'need only its dependencies and augment nothing global',
    () => {
      const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as {
        exports: Record<string, { types: string; import: string }>;
        dependencies: Record<string, string>;
      };
      for (const [sub, entry] of [
        ['.', 'dist/index'],
        ['./plugin', 'dist/plugin-api/index'],
        ['./testing', 'dist/testing/index'],
      ] as const) {
        expect(manifest.exports[sub]).toMatchObject({ types: `./${entry}.d.ts`, import: `./${entry}.js` });
      }
      // Every module the public declarations reach, and every package they import from
      const seen = new Set<string>();
      const packages = new Set<string>();
      const walk = (file: string) => {
        if (seen.has(file)) return;
        seen.add(file);
        const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
        expect(text, file).not.toMatch(/declare global|declare module ['"]|\/\/\/ <reference types=/);
        for (const m of text.matchAll(/(?:from\s+|import\(\s*)['"]([^'"]+)['"]/g)) {
          const spec = m[1]!;
          if (!spec.startsWith('.'))
            packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
          else
            walk(
              existsSync(resolve(dirname(file), spec.replace(/\.js$/, '.d.ts')))
                ? resolve(dirname(file), spec.replace(/\.js$/, '.d.ts'))
                : resolve(dirname(file), spec, 'index.d.ts'),
            );
        }
      };
      for (const e of PUBLIC_ENTRIES) walk(join(pkg, `${e}.d.ts`));
      expect(seen.size).toBeGreaterThan(3);
      for (const p of packages) {
        if (p.startsWith('node:')) continue; // the user's @types/node
        // the package ships its types, or its @types package is a dependency (not a devDependency)
        const own = JSON.parse(readFileSync(join(ROOT, 'node_modules', p, 'package.json'), 'utf8')) as {
          types?: string;
          typings?: string;
          exports?: unknown;
        };
        const typed =
          Boolean(own.types ?? own.typings) ||
          JSON.stringify(own.exports ?? '').includes('"types"') ||
          `@types/${p}` in manifest.dependencies;
        expect({ p, dependency: p in manifest.dependencies, typed }).toEqual({ p, dependency: true, typed: true });
      }
    },
  );
});

describe('the compiled CLI', () => {
  it('prints its version without loading tsx', () => {
    const r = pinbot(tmp.dir, ['--version']);
    expect(r).toMatchObject({
      code: 0,
      out: `${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version}\n`,
    });
    expect(r.err).not.toContain('tsx loaded');
  });

  it('loads a .ts plugin of a "type": "commonjs" project, loading tsx only then', () => {
    const project = join(tmp.dir, 'cjs-project');
    mkdirSync(join(project, 'node_modules'), { recursive: true });
    mkdirSync(join(project, 'plugins'));
    symlinkSync(pkg, join(project, 'node_modules', 'pinbot'), 'dir');
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'my-bots', version: '1.0.0', type: 'commonjs' }),
    );
    writeFileSync(
      join(project, 'plugins/plain.js'),
      "module.exports = { name: 'plain', version: '1.0.0', pinbot: '>=0.1.0', actions: {} };\n",
    );
    const plain = pinbot(project, ['plugins', 'list']);
    expect(plain.out).toMatch(/^plain +1\.0\.0 +loaded +plugins\/plain\.js$/m);
    expect(plain.err).not.toContain('tsx loaded');

    writeFileSync(
      join(project, 'plugins/dice.ts'),
      "import { definePlugin } from 'pinbot/plugin';\nconst sides: number = " +
        "6;\nexport default definePlugin({ name: 'dice', version: '0.1.0', pinbot: " +
        "'>=0.1.0', actions: { roll: { schema: { type: 'object' }, run: async () => { " +
        'void sides; } } } });\n',
    );
    const r = pinbot(project, ['plugins', 'list']);
    expect(r.out).toMatch(/^dice +0\.1\.0 +loaded +plugins\/dice\.ts\n {4}actions: dice\.roll$/m);
    expect(r.code).toBe(0);
    expect(r.err).toContain('tsx loaded');
  });

  it('names the one-line fix when a plugin needs "type": "module"', () => {
    const project = join(tmp.dir, 'cjs-project');
    writeFileSync(
      join(project, 'plugins/wait.ts'),
      "import { definePlugin } from 'pinbot/plugin';\nconst n = await " +
        "Promise.resolve(1);\nexport default definePlugin({ name: 'wait', version: " +
        "'0.1.0', pinbot: '>=0.1.0' });\n",
    );
    writeFileSync(
      join(project, 'plugins/esm.js'),
      "export default { name: 'esm', version: '0.1.0', pinbot: '>=0.1.0' };\n",
    );
    const r = pinbot(project, ['plugins', 'list']);
    expect(r.out).toContain(
      'plugins/wait.ts:2:11: syntax error: Top-level await is currently not supported ' +
        'with the "cjs" output format — add "type": "module" to package.json (it is ' +
        '"commonjs"), or name the file wait.mts',
    );
    expect(r.out).toMatch(
      new RegExp(
        String.raw`plugins\/esm\.js:1: syntax error: .+ — add "type": "module" to ` +
          String.raw`package\.json \(it is "commonjs"\), or name the file esm\.mjs`,
      ),
    );
    expect(r.out).toMatch(/^dice +0\.1\.0 +loaded/m);
  });
});

describe('a project made by pinbot init on the built package', () => {
  it('validates, type-checks strictly, and its plugin test and scenario pass', () => {
    const r = pinbot(tmp.dir, ['init', 'my-bots']);
    expect(r.code).toBe(0);
    expect(r.err).not.toContain('tsx loaded');
    const project = join(tmp.dir, 'my-bots');
    // what `npm install` puts there: this package, and the tools of the project's devDependencies
    // (the real install, from the tarball, is `npm run try-getting-started`: it needs npm's cache)
    mkdirSync(join(project, 'node_modules', '@types'), { recursive: true });
    symlinkSync(pkg, join(project, 'node_modules', 'pinbot'), 'dir');
    for (const m of ['typescript', 'vitest', '@types/node'])
      symlinkSync(join(ROOT, 'node_modules', m), join(project, 'node_modules', m), 'dir');
    const devDependencies = Object.keys(
      JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).devDependencies,
    );
    expect(devDependencies.sort()).toEqual(['@types/node', 'typescript', 'vitest']);

    const validate = pinbot(project, ['bots', 'validate']);
    expect(validate).toMatchObject({ code: 0, out: expect.stringContaining('1 of 1 bot file(s) valid') });
    const scenarios = pinbot(project, ['scenario', 'run', 'scenarios/', '--reporter', 'junit=reports/scenarios.xml']);
    expect(scenarios.out + scenarios.err).toContain('1 scenario: 1 passed');
    expect(scenarios.code).toBe(0);
    expect(existsSync(join(project, 'reports/scenarios.xml'))).toBe(true);

    const env = { ...process.env, PINBOT_FROM_SOURCE: '', NO_COLOR: '1', CI: '1' };
    const tsc = spawnSync(process.execPath, [join(project, 'node_modules/typescript/bin/tsc'), '--noEmit'], {
      cwd: project,
      encoding: 'utf8',
      env,
    });
    expect({ status: tsc.status, out: tsc.stdout + tsc.stderr }).toEqual({ status: 0, out: '' });
    const vitest = spawnSync(process.execPath, [join(project, 'node_modules/vitest/vitest.mjs'), 'run'], {
      cwd: project,
      encoding: 'utf8',
      env,
    });
    expect(vitest.stdout + vitest.stderr).toMatch(/Tests +2 passed/);
    expect(vitest.status).toBe(0);
  }, 120_000);

  it('npm start serves and runs its bot (everything serve reads ships in dist/)', async () => {
    const project = join(tmp.dir, 'my-bots');
    const server = spawn(
      process.execPath,
      [join(project, 'node_modules/pinbot/bin/pinbot.js'), 'serve', '--port', '0'],
      { cwd: project, env: { ...process.env, PINBOT_FROM_SOURCE: '', NO_COLOR: '1' } },
    );
    let out = '';
    server.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    server.stderr.setEncoding('utf8').on('data', (c: string) => (out += c));
    const exited = once(server, 'exit');
    try {
      await Promise.race([
        new Promise<void>((ok) => server.stdout.on('data', () => /running as Welcome Bot/.test(out) && ok())),
        exited.then(() => undefined),
      ]);
      expect(out).toMatch(/"msg":"listening on http:\/\/127\.0\.0\.1:\d+"/);
      expect(out).toContain('bot welcome running as Welcome Bot');
    } finally {
      server.kill('SIGTERM');
      await exited;
    }
  }, 60_000);
});
