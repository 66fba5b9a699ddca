#!/usr/bin/env node
// Runs a TypeScript file of this repository (benchmarks, simulators): node bin/run-ts.js FILE [ARGS…]
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { register } from 'tsx/esm/api';

register();
const file = process.argv[2];
if (!file) {
  console.error('usage: node bin/run-ts.js FILE.ts [ARGS…]');
  process.exit(2);
}
process.argv.splice(2, 1);
await import(pathToFileURL(resolve(file)).href);
