#!/usr/bin/env node
// The `pinbot` command. Runs the compiled code of dist/ (built by `npm run build`, which
// `prepare` runs at `npm ci`, `npm pack` and an install from git). PINBOT_FROM_SOURCE=1 runs
// src/ through tsx instead: the repository's tests set it so that they never run a stale dist/,
// and a checkout without dist/ falls back to it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dist = new URL('../dist/cli/main.js', import.meta.url);
if (process.env.PINBOT_FROM_SOURCE !== '1' && existsSync(dist)) {
  await import(dist.href);
} else {
  const { register } = await import('tsx/esm/api');
  // pinbot's tsconfig maps 'pinbot/…' to src/, also for plugins of a project elsewhere (tests)
  register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
  await import('../src/cli/main.ts');
}
