import { existsSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { packageFile } from '../util/project-files.js';

/**
 * The commands and files the CLI's hints name, as they are in the user's project (the working
 * directory): pinbot's own checkout has `npm test` = vitest, `schemas/` and `docs/`; a project
 * made by `pinbot init` runs vitest and the scenarios in `npm test`; a project made by
 * `npm init` has neither. A hint that names a command or a file the user does not have sends
 * them the wrong way, so each is looked up here. Internal.
 */

interface PackageJson {
  type?: string;
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

/** The package.json of the working directory, if any. */
function projectPackage(): PackageJson | undefined {
  try {
    return JSON.parse(readFileSync('package.json', 'utf8')) as PackageJson;
  } catch {
    return undefined;
  }
}

/** The shell command that runs one test file. */
export function testCommand(file: string): string {
  const pkg = projectPackage();
  const test = pkg?.scripts?.test ?? '';
  // `npm test -- FILE` appends FILE to the script: right only when the script is vitest alone
  if (/^vitest( run)?$/.test(test.trim())) return `npm test -- ${file}`;
  const hasVitest = existsSync('node_modules/vitest') || !!pkg?.devDependencies?.vitest || !!pkg?.dependencies?.vitest;
  return hasVitest ? `npx vitest run ${file}` : `npm install -D vitest, then npx vitest run ${file}`;
}

/** The shell command that starts the server and the bots. */
export function startCommand(): string {
  return /\bserve\b/.test(projectPackage()?.scripts?.start ?? '') ? 'npm start' : 'npx pinbot serve';
}

export { schemaRef } from '../util/project-files.js';

/** Where the user reads a page of pinbot's manual: `docs/plugins.md` here, or in the package. */
export function docRef(page: string): string | undefined {
  if (existsSync(resolve('docs', page))) return `docs/${page}`;
  const file = packageFile(`docs/${page}`);
  return file ? relative('.', file).split('\\').join('/') : undefined;
}
