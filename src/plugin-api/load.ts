import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describeThrown, shortPath } from './boundary.js';

/** Where a plugin came from. */
export interface PluginOrigin {
  kind: 'file' | 'package' | 'inline';
  /** What the operator reads: `plugins/karma.ts`, `npm pinbot-plugin-x`, `inline karma`. */
  label: string;
  file?: string;
  package?: string;
  /** Its own code (the file, or the package folder): frames in it are the plugin's. */
  roots: string[];
}

/** A module that was imported, or why it could not be. */
export interface Imported {
  origin: PluginOrigin;
  value?: unknown;
  problem?: { message: string; hint?: string; line?: number; col?: number };
}

/** Plugin files of a folder: `*.ts`, `*.js`, `*.mjs`, `*.mts`; not tests, type declarations or `_`-files. */
export function pluginFiles(dir: string): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return [];
  return readdirSync(dir)
    .filter(
      (f) =>
        /\.(m?ts|m?js)$/.test(f) &&
        !/\.(test|spec)\.[mc]?[jt]s$/.test(f) &&
        !f.endsWith('.d.ts') &&
        !f.startsWith('_') &&
        !f.startsWith('.'),
    )
    .sort()
    .map((f) => resolve(dir, f));
}

/** The line and column of a load error in `file`, from its message or stack (tsx, node, vite). Internal. */
function position(err: unknown, file: string): { line?: number; col?: number } {
  // esbuild (tsx) and vite give the position as data; columns there count from 0
  const e = err as {
    loc?: { line?: number; column?: number };
    errors?: Array<{ location?: { line?: number; column?: number } | null }>;
  } | null;
  const loc = e?.errors?.[0]?.location ?? e?.loc;
  if (loc?.line) return { line: loc.line, col: (loc.column ?? 0) + 1 };
  let text = '';
  try {
    text = `${(err as Error).message}\n${(err as Error).stack ?? ''}`;
  } catch {
    return {};
  }
  // `…/file.ts:4:3`, the path absolute, a file URL, or relative to the working directory (vite)
  const esc = basename(file).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // esbuild's message (tsx: a TransformError) counts columns from 0
  const from0 = (err as Error)?.name === 'TransformError' ? 1 : 0;
  // eslint-disable-next-line no-control-regex
  for (const m of text
    .replace(/\u001b\[[0-9;]*m/g, '')
    .matchAll(new RegExp(`([^\\s()[\\]]*${esc}):(\\d+)(?::(\\d+))?`, 'g'))) {
    let path = m[1]!;
    if (path.startsWith('file://')) path = path.slice(7);
    if (path.startsWith('/@fs/')) path = path.slice(4); // vite's name for a file outside its root
    if (resolve(path) === file) return { line: Number(m[2]), col: m[3] ? Number(m[3]) + from0 : undefined };
  }
  return {};
}

/** Node reports a syntax error of an ES module without its position: `node --check` has it. Internal. */
async function checkSyntax(file: string): Promise<{ line?: number }> {
  if (!/\.m?js$/.test(file)) return {};
  // loaded for this rare case only: a CLI call that loads plugins fine never needs it
  const { spawnSync } = await import('node:child_process');
  const r = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8', timeout: 10_000 });
  const m = /:(\d+)\s*$/m.exec(r.stderr.split('\n')[0] ?? '');
  return m ? { line: Number(m[1]) } : {};
}

/** The message of a load error without the bundler's preamble. Internal. */
function loadMessage(err: unknown): string {
  const first = (err as { errors?: Array<{ text?: unknown }> } | null)?.errors?.[0]?.text;
  if (typeof first === 'string') return first;
  // eslint-disable-next-line no-control-regex
  const text = describeThrown(err).replace(/\u001b\[[0-9;]*m/g, '');
  const bundler = /(?:ERROR:|\[PARSE_ERROR\]) (.+)/.exec(text);
  const line = text.split('\n').find((l) => l.trim() && !/^(Transform|Parse) fail/.test(l.trim()));
  return (bundler ? bundler[1]! : (line ?? text)).trim();
}

/** This module runs as TypeScript source, so a TypeScript loader is active. Internal. */
const FROM_SOURCE = import.meta.url.endsWith('.ts');

/** The `import` of the tsx API pinbot loads users' TypeScript with, registered once, on first use. Internal. */
let tsLoader: Promise<(specifier: string, parent: string) => Promise<unknown>> | undefined;

/**
 * Imports a module file. Compiled pinbot runs on plain Node, which cannot import TypeScript, so
 * a `.ts`/`.mts`/`.cts` file goes through tsx — loaded only then, so a CLI call or a project
 * without TypeScript never pays for it. pinbot running from its own sources already runs under a
 * TypeScript loader (tsx, vitest), which imports the file as it imports pinbot. Internal.
 */
async function importModule(file: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(file).href;
  if (!/\.[mc]?ts$/.test(file) || FROM_SOURCE) return (await import(url)) as Record<string, unknown>;
  tsLoader ??= import('tsx/esm/api').then(({ register }) => {
    const api = register({ namespace: 'pinbot-plugins' });
    return (specifier, parent) => api.import(specifier, parent) as Promise<unknown>;
  });
  const mod = (await (await tsLoader)(url, import.meta.url)) as Record<string, unknown>;
  // A .ts file of a "type": "commonjs" project runs as CommonJS: its `export default` arrives
  // wrapped once more ({ default: { default: plugin } }, marked __esModule).
  const inner = mod.default as { __esModule?: boolean; default?: unknown } | undefined;
  return inner && typeof inner === 'object' && inner.__esModule === true ? { ...inner, default: inner.default } : mod;
}

/** The package.json that decides whether `file` is an ES module or CommonJS, and its `type`. Internal. */
function moduleScope(file: string): { packageJson?: string; type: string } {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const pj = join(dir, 'package.json');
    if (existsSync(pj)) {
      try {
        const type = (JSON.parse(readFileSync(pj, 'utf8')) as { type?: unknown }).type;
        return { packageJson: pj, type: typeof type === 'string' ? type : 'commonjs' };
      } catch {
        return { packageJson: pj, type: 'commonjs' };
      }
    }
    if (dirname(dir) === dir) return { type: 'commonjs' };
  }
}

/**
 * Node's errors of an ES module loaded as CommonJS (or the reverse) point away from the fix
 * ("move work into setup()", "a cycle"): the one-line fix is the project's module type.
 * Internal.
 */
function moduleTypeHint(err: unknown, file: string): string | undefined {
  const code = (err as NodeJS.ErrnoException)?.code ?? '';
  const text = describeThrown(err);
  const esmAsCjs =
    /^ERR_REQUIRE_(ESM|ASYNC_MODULE|CYCLE_MODULE)$/.test(code) ||
    /Cannot use import statement outside a module|Unexpected token 'export'|require\(\) (of )?ES Module|exports is not defined in ES module scope|require is not defined in ES module scope|not supported with the "cjs" output format/.test(
      text,
    );
  if (!esmAsCjs || /\.m[jt]s$/.test(file)) return undefined;
  const scope = moduleScope(file);
  const where = scope.packageJson ? shortPath(scope.packageJson) : 'the package.json of your project';
  return scope.type === 'module'
    ? `the file mixes ES module and CommonJS code; use import/export only (${where} has "type": "module")`
    : `add "type": "module" to ${where} (it is "${scope.type}"), or name the file ` +
        `${basename(file).replace(/\.[cm]?([jt])s$/, '.m$1s')}`;
}

/** Imports one plugin module; a throw at import (syntax, a missing import, top-level code) is a problem. */
export async function importFile(file: string, origin?: PluginOrigin): Promise<Imported> {
  const o: PluginOrigin = origin ?? { kind: 'file', label: shortPath(file), file, roots: [file] };
  try {
    const mod = await importModule(file);
    if (!('default' in mod) || mod.default === undefined) {
      return {
        origin: o,
        problem: {
          message: 'the module has no default export',
          hint:
            'end it with `export default definePlugin({ name, version, pinbot, … })` ' +
            '(import { definePlugin } from "pinbot/plugin")',
        },
      };
    }
    return { origin: o, value: mod.default };
  } catch (err) {
    const syntax =
      err instanceof SyntaxError ||
      (err as Error)?.name === 'TransformError' ||
      /Transform failed|Parse fail|PARSE_ERROR/.test(describeThrown(err));
    let pos = position(err, file);
    if (syntax && pos.line === undefined) pos = await checkSyntax(file);
    const missing = (err as NodeJS.ErrnoException)?.code === 'ERR_MODULE_NOT_FOUND';
    const moduleType = moduleTypeHint(err, file);
    return {
      origin: o,
      problem: {
        message: `${syntax ? 'syntax error' : 'loading it threw'}: ${loadMessage(err)}`,
        hint:
          moduleType ??
          (syntax
            ? 'fix the code; the other plugins and every bot run meanwhile'
            : missing
              ? 'install what it imports (npm install …) or fix the import path'
              : 'its top-level code must not throw; move work into setup()'),
        ...pos,
      },
    };
  }
}

/** The entry file of an installed package folder (exports, module, main). Internal. */
function entryOf(dir: string): string | undefined {
  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const pick = (e: unknown): string | undefined => {
    if (typeof e === 'string') return e;
    if (Array.isArray(e)) return e.map(pick).find(Boolean);
    if (e && typeof e === 'object') {
      const o = e as Record<string, unknown>;
      if ('.' in o) return pick(o['.']);
      for (const c of ['import', 'node', 'default', 'require']) if (c in o) return pick(o[c]);
    }
    return undefined;
  };
  const rel =
    pick(pkg.exports) ??
    (typeof pkg.module === 'string' ? pkg.module : undefined) ??
    (typeof pkg.main === 'string' ? pkg.main : undefined) ??
    'index.js';
  const file = resolve(dir, rel);
  return existsSync(file) ? file : undefined;
}

/**
 * Imports a plugin installed as an npm package: looked up in `node_modules` from `projectDir`
 * upwards, as Node would, and loaded from its entry file (ES modules and TypeScript sources too).
 */
export async function importPackage(name: string, projectDir: string): Promise<Imported> {
  const label = `npm ${name}`;
  if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i.test(name)) {
    return {
      origin: { kind: 'package', label, package: name, roots: [] },
      problem: {
        message: `"${name}" is not an npm package name`,
        hint: 'list package names in plugins.packages, e.g. pinbot-plugin-karma or @acme/pinbot-karma',
      },
    };
  }
  for (let dir = resolve(projectDir); ; dir = dirname(dir)) {
    const pkgDir = join(dir, 'node_modules', name);
    if (existsSync(join(pkgDir, 'package.json'))) {
      const entry = entryOf(pkgDir);
      const origin: PluginOrigin = { kind: 'package', label, package: name, file: entry, roots: [pkgDir] };
      if (!entry)
        return {
          origin,
          problem: {
            message: `the package ${name} (${shortPath(pkgDir)}) has no entry file`,
            hint: 'its package.json needs "exports" or "main" naming a module',
          },
        };
      return importFile(entry, origin);
    }
    if (dirname(dir) === dir) break;
  }
  return {
    origin: { kind: 'package', label, package: name, roots: [] },
    problem: {
      message: `the npm package ${name} is not installed in ${shortPath(resolve(projectDir))}`,
      hint: `run \`npm install ${name}\`, or remove it from plugins.packages in config.yaml`,
    },
  };
}
