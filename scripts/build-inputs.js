// What dist/ is built from, as one SHA-256: every file under src/, the build's scripts and
// tsconfigs, package.json, package-lock.json and the installed typescript and ajv versions.
// scripts/build.js records it for the checkout's dist/ once the build has finished
// (node_modules/.cache/pinbot/dist-inputs.sha256); the package test copies that dist/ instead
// of building its own when the sources are still the ones it was built from (as after `npm ci`).
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const FILES = [
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'scripts/build.js',
  'scripts/build-validators.js',
  'scripts/build-inputs.js',
  'node_modules/typescript/package.json',
  'node_modules/ajv/package.json',
];

/** The hash of what `scripts/build.js` in `root` builds dist/ from. */
export function buildInputsHash(root) {
  const h = createHash('sha256');
  const add = (file) => {
    h.update(`${relative(root, file)}\0`);
    h.update(existsSync(file) ? readFileSync(file) : '(none)');
    h.update('\0');
  };
  const src = join(root, 'src');
  const files = readdirSync(src, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
  for (const f of files) add(f);
  for (const f of FILES) add(join(root, f));
  return h.digest('hex');
}

/** Where the hash of the checkout's dist/ is kept (outside dist/, so it never ships). */
export function distStamp(root) {
  return join(root, 'node_modules', '.cache', 'pinbot', 'dist-inputs.sha256');
}
