import { existsSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';

/**
 * The project a scenario file belongs to: the nearest folder at or above it that holds
 * `config.yaml` or `package.json`; without one, the working directory when the file is inside
 * it, else the file's own folder. Scenario files read files (`use:` fragments, `bots:` files,
 * `plugins:` modules) only inside it, so a scenario from an untrusted pull request cannot read
 * `/etc/passwd` or `~/.ssh` into a report (`--allow-outside-root` lifts this).
 *
 * @example projectRoot('/repo/scenarios/tips.yaml') // '/repo' (it holds package.json)
 */
export function projectRoot(scenarioFile: string, cwd: string = process.cwd()): string {
  const file = resolve(scenarioFile);
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'config.yaml')) || existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) break;
  }
  return inside(file, resolve(cwd)) ? resolve(cwd) : dirname(file);
}

/** Whether `file` is `dir` or under it, by path. Internal. */
function inside(file: string, dir: string): boolean {
  const r = relative(dir, file);
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
}

/** The real path (symlinks followed) of what exists of `p`: a missing file's folder is resolved. Internal. */
function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    const parent = dirname(p);
    return parent === p ? p : join(real(parent), relative(parent, p));
  }
}

/**
 * Why `file` (absolute) may not be read by a scenario of `root`, or undefined when it may: it
 * must lie inside the root once every symbolic link is followed (a link inside the project
 * that points out of it is outside).
 *
 * @example outsideRoot('/etc/passwd', '/repo') // 'it is outside the project root /repo'
 */
export function outsideRoot(file: string, root: string): string | undefined {
  const target = real(file);
  const base = real(root);
  if (inside(target, base)) return undefined;
  return inside(resolve(file), resolve(root))
    ? `it leads outside the project root ${base} (to ${target}, through a symbolic link)`
    : `it is outside the project root ${base}`;
}

/** The hint of a refused path: what to do. */
export const OUTSIDE_HINT =
  'scenarios read files only inside their project (the folder of config.yaml or ' +
  'package.json above them): move the file into it, or run with --allow-outside-root ' +
  'if you trust this scenario';
