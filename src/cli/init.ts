import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import type { Command } from 'commander';
import { AdminError } from '../admin/errors.js';
import { PINBOT_VERSION } from '../plugin-api/version.js';
import { pluginSource, pluginTest } from './plugin-template.js';

/** The folder of the files `pinbot init` copies (shipped in the package beside `src/`). */
export const PROJECT_TEMPLATE_DIR = resolve(import.meta.dirname, '../../templates/project');

/** pinbot's own package.json: the versions of the tools a project uses (its own version is PINBOT_VERSION). */
const OWN_PACKAGE = resolve(import.meta.dirname, '../../package.json');

/** The folder of this pinbot package (a checkout, or node_modules/pinbot). */
const OWN_ROOT = resolve(import.meta.dirname, '../..');

/**
 * What the new project's package.json asks npm for, so that `npm install` there gets this very
 * pinbot: the tarball or folder it was installed from (`npx ./pinbot-0.1.0.tgz init` installs
 * it into npx's cache, whose package.json names the tarball), a link to this checkout when run
 * from one, else the registry's `^VERSION`. A `file:` spec is written relative to the project.
 * Internal.
 */
export function pinbotSpec(projectRoot: string, version: string, ownRoot = OWN_ROOT): string {
  const fileSpec = (target: string) => `file:${relative(projectRoot, target).split(sep).join('/') || '.'}`;
  if (basename(dirname(ownRoot)) !== 'node_modules') return fileSpec(ownRoot);
  const owner = dirname(dirname(ownRoot));
  try {
    const pkg = JSON.parse(readFileSync(join(owner, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    const spec = pkg.dependencies?.pinbot ?? pkg.devDependencies?.pinbot;
    if (spec?.startsWith('file:')) return fileSpec(resolve(owner, spec.slice('file:'.length)));
  } catch {
    // no package.json above node_modules (a global install): the registry
  }
  return `^${version}`;
}

/** The plugin a new project starts with (its test shows the test kit). */
const FIRST_PLUGIN = 'hello';

/** One file of a new project. */
export interface ProjectFile {
  /** Path inside the project, with `/`. */
  path: string;
  text: string;
}

/**
 * An npm package name from a folder name: lower case, letters, digits, `-`, `.`, `_`, not
 * starting with `.` or `_` (npm's rules). Internal.
 */
export function packageName(dir: string): string {
  const name = basename(resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+/, '')
    .slice(0, 214);
  return name || 'my-bots';
}

/** Template paths name dot files `_gitignore`, `_github/`: npm pack drops or renames dot files. */
const dotted = (path: string) =>
  path
    .split('/')
    .map((part) => (part.startsWith('_') ? `.${part.slice(1)}` : part))
    .join('/');

function templateFiles(dir: string, at = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(dir, at), { withFileTypes: true })) {
    const path = at ? `${at}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...templateFiles(dir, path));
    else out.push(path);
  }
  return out.sort();
}

/**
 * The files of a new project named `name`: the template folder's (with the project name and
 * pinbot's version filled in), `package.json`, and a first plugin with its test — the same
 * files `pinbot plugins new` writes.
 *
 * @example projectFiles('my-bots').map((f) => f.path) // ['.github/workflows/pinbot.yml', …, 'package.json', …]
 */
export function projectFiles(name: string, pinbot?: string): ProjectFile[] {
  const dev =
    (JSON.parse(readFileSync(OWN_PACKAGE, 'utf8')) as { devDependencies?: Record<string, string> }).devDependencies ??
    {};
  const fill = (text: string) => text.replaceAll('__NAME__', name).replaceAll('__PINBOT_VERSION__', PINBOT_VERSION);
  const files: ProjectFile[] = templateFiles(PROJECT_TEMPLATE_DIR).map((path) => ({
    path: dotted(path),
    text: fill(readFileSync(join(PROJECT_TEMPLATE_DIR, path), 'utf8')),
  }));
  const pkg = {
    name,
    version: '0.1.0',
    private: true,
    // plugins/*.ts are ES modules; without this Node loads them as CommonJS and they fail
    type: 'module',
    scripts: {
      start: 'pinbot serve',
      test: 'vitest run && pinbot scenario run scenarios/',
      validate: 'pinbot bots validate',
      scenarios:
        'pinbot scenario run scenarios/ --reporter junit=reports/scenarios.xml ' +
        '--coverage reports/coverage.html --coverage reports/coverage.json',
    },
    dependencies: { pinbot: pinbot ?? `^${PINBOT_VERSION}` },
    // the versions pinbot itself is tested with
    devDependencies: {
      '@types/node': dev['@types/node'] ?? '^20.19.0',
      typescript: dev['typescript'] ?? '^5.9.0',
      vitest: dev['vitest'] ?? '^4.1.0',
    },
  };
  files.push({ path: 'package.json', text: JSON.stringify(pkg, null, 2) + '\n' });
  files.push({ path: `plugins/${FIRST_PLUGIN}.ts`, text: pluginSource(FIRST_PLUGIN, PINBOT_VERSION) });
  files.push({ path: `plugins/${FIRST_PLUGIN}.test.ts`, text: pluginTest(FIRST_PLUGIN) });
  return files.sort((a, b) => a.path.localeCompare(b.path));
}

/** What `initProject` did. */
export interface InitResult {
  dir: string;
  created: string[];
  /** Files that were there already and were kept as they are (with `force`). */
  kept: string[];
}

/**
 * Writes a new pinbot project into `dir` (made if missing). Refuses, writing nothing, when any
 * of its files exists; with `force` writes only the missing ones and never overwrites.
 *
 * @example initProject({ dir: 'my-bots' }) // { created: ['.github/workflows/pinbot.yml', …], kept: [] }
 */
export function initProject({ dir, force = false, name }: { dir: string; force?: boolean; name?: string }): InitResult {
  const root = resolve(dir);
  if (existsSync(root) && !statSync(root).isDirectory())
    throw new AdminError(`${dir} is a file, not a folder: name a new or existing folder for the project`);
  const files = projectFiles(name ?? packageName(root), pinbotSpec(root, PINBOT_VERSION));
  const there = files.filter((f) => existsSync(join(root, ...f.path.split('/'))));
  if (there.length && !force) {
    throw new AdminError(
      `nothing written: ${there.map((f) => f.path).join(', ')} ` +
        `${there.length === 1 ? 'exists' : 'exist'} already in ${shown(root)}. ` +
        `Run again with --force to add only the missing files (existing ones are kept), or pick an empty folder`,
    );
  }
  const created: string[] = [];
  for (const f of files) {
    if (there.includes(f)) continue;
    const file = join(root, ...f.path.split('/'));
    mkdirSync(dirname(file), { recursive: true });
    // 'wx': a file that appeared since the check is still never overwritten
    writeFileSync(file, f.text, { flag: 'wx' });
    created.push(f.path);
  }
  return { dir: root, created, kept: there.map((f) => f.path) };
}

/** A folder as the user would type it from here. Internal. */
function shown(dir: string): string {
  const rel = relative('.', dir);
  return rel === '' ? 'this folder' : rel.startsWith('..') ? dir : `.${sep}${rel}`;
}

/** What a kept package.json lacks for the project to work, as commands that add it. Internal. */
function packageJsonGaps(root: string): string[] {
  let pkg: {
    type?: string;
    scripts?: Record<string, string>;
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  try {
    pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  } catch (err) {
    return [`package.json cannot be read (${(err as Error).message}); fix it, then run pinbot init --force again`];
  }
  const fresh = JSON.parse(projectFiles('x').find((f) => f.path === 'package.json')!.text) as {
    scripts: Record<string, string>;
  };
  const gaps: string[] = [];
  if (pkg.type !== 'module') gaps.push('npm pkg set type=module        # plugins/*.ts are ES modules');
  for (const [script, command] of Object.entries(fresh.scripts)) {
    if (pkg.scripts?.[script] === undefined) gaps.push(`npm pkg set scripts.${script}=${JSON.stringify(command)}`);
  }
  if (!pkg.dependencies?.pinbot && !pkg.devDependencies?.pinbot) {
    const spec = pinbotSpec(root, PINBOT_VERSION);
    gaps.push(`npm install ${spec.startsWith('^') ? 'pinbot' : spec}`);
  }
  if (!pkg.dependencies?.vitest && !pkg.devDependencies?.vitest)
    gaps.push('npm install -D vitest typescript @types/node');
  return gaps;
}

/** `pinbot init [DIR]`. Internal. */
export function registerInitCommand(program: Command): void {
  program
    .command('init')
    .description('make a new pinbot project in DIR (default: here): a bot, a plugin and its test, a scenario, CI')
    .argument('[dir]', 'folder of the project (made if missing)', '.')
    .option('--force', 'add the missing files to a folder that has some already (never overwrites)')
    .option('--name <name>', 'package name (default: the folder name)')
    .action((dir: string, opts: { force?: boolean; name?: string }) => {
      const r = initProject({ dir, force: opts.force === true, name: opts.name });
      const out: string[] = [];
      for (const f of r.created) out.push(`created ${f}`);
      for (const f of r.kept) out.push(`kept    ${f} (exists)`);
      if (r.kept.includes('package.json')) {
        const gaps = packageJsonGaps(r.dir);
        if (gaps.length)
          out.push('', 'Your package.json lacks what the project needs; add it with:', ...gaps.map((g) => `  ${g}`));
      }
      if (!r.created.length) out.push('', 'nothing to add: every file of a new project is there');
      const where = relative('.', r.dir);
      out.push(
        '',
        'Next:',
        ...(where ? [`  cd ${where.includes(' ') ? JSON.stringify(where) : where}`] : []),
        '  npm install',
        '  npm test        # the plugin test, then the scenario',
        '  npm start       # serves http://127.0.0.1:3000 and runs bots/welcome.yaml',
      );
      process.stdout.write(out.join('\n') + '\n');
    });
}
