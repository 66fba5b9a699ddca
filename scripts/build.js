#!/usr/bin/env node
// Builds dist/ from src/: the compiled JavaScript, declaration files and source maps (with
// their sources inlined, since src/ is not shipped), plus the data files the code reads next to
// itself. Run by `prepare`, so `npm ci` in a checkout, `npm pack` and an install from a git URL
// all end with a working dist/. Always from scratch: a file moved or removed in src/ must not
// linger in dist/ and ship.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildInputsHash, distStamp } from './build-inputs.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');
// --out DIR builds elsewhere (the package test builds a copy without touching dist/)
const at = process.argv.indexOf('--out');
const dist = at > 0 && process.argv[at + 1] ? resolve(process.argv[at + 1]) : join(root, 'dist');

// What the checkout's dist/ is built from (read before the build: an edit during it makes the
// stamp stale, never wrong), recorded once the build has finished (scripts/build-inputs.js).
const stamp = dist === join(root, 'dist') ? distStamp(root) : undefined;
const inputs = stamp ? buildInputsHash(root) : undefined;
if (stamp) rmSync(stamp, { force: true });
rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', dist], {
  stdio: 'inherit',
});
if (r.status !== 0) {
  console.error('pinbot build: tsc failed (see above); dist/ is incomplete');
  process.exit(r.status ?? 1);
}
// Files the code reads beside itself must sit beside it in dist/ too: JSON read with
// readFileSync(new URL('./x.json', import.meta.url)), and the web console's assets/ (served as
// they are; without them `pinbot serve` of the package fails at start).
for (const e of readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!e.isFile() || !(e.name.endsWith('.json') || relative(src, e.parentPath).split(/[\\/]/).includes('assets')))
    continue;
  const from = join(e.parentPath, e.name);
  const to = join(dist, relative(src, from));
  cpSync(from, to);
  if (process.env.PINBOT_BUILD_VERBOSE) console.log(`copied ${relative(root, from)} → ${relative(root, dirname(to))}/`);
}
// The built-in schemas' validators as ajv standalone code: the CLI loads them instead of
// compiling them at every start (src/util/prebuilt-validator.ts).
const v = spawnSync(process.execPath, [join(root, 'scripts/build-validators.js'), dist], { stdio: 'inherit' });
if (v.status !== 0) {
  console.error('pinbot build: generating the validators failed (see above)');
  process.exit(v.status ?? 1);
}
if (stamp) {
  mkdirSync(dirname(stamp), { recursive: true });
  writeFileSync(stamp, `${inputs}\n`);
}
