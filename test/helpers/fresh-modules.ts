import { vi } from 'vitest';

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
