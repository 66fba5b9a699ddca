import { inject, vi } from 'vitest';

/**
 * Setup file of every test project (vitest.config.ts). The projects run with `isolate: false`:
 * a worker process serves many test files one after the other, so starting Node, vitest and the
 * packages under node_modules (express, ajv, pg, pino, playwright…) is paid once per worker
 * instead of once per file — about 1.3 s of CPU a file. What isolation gave the tests is kept
 * here: before each file, every module vitest loaded from the repository (src/, test/,
 * plugins/) is dropped, so the file imports them afresh, with fresh module state, as in a new
 * process; vitest drops a file's `vi.mock`s and restores its spies, and (unstubEnvs,
 * unstubGlobals) what `vi.stubEnv`/`vi.stubGlobal` changed.
 *
 * What a file still shares with the files before it in its worker is the process itself:
 * `process.env` set by hand (restore it in `afterAll`, or use `vi.stubEnv`), `process.on`
 * listeners, servers or timers a file leaves running, and the state of packages under
 * node_modules.
 */
vi.resetModules();

// How the CLIs the file spawns run (bin/pinbot.js): dist/ when test/helpers/cli-global-setup.ts
// found it built from the current sources, else src/ through tsx. Set before each file, so a
// file that changed it by hand does not pass that on.
process.env.PINBOT_FROM_SOURCE = inject('pinbotFromSource') ?? '1';
