#!/usr/bin/env node
// The `pinbot` command. Loads the TypeScript sources through tsx, so there is no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
