import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { DurationSequencer } from './test/helpers/sequencer.js';

/**
 * API tests that run a second time on PostgreSQL (project `postgres`: PINBOT_TEST_DRIVER makes
 * test/helpers/api.ts open a PgStore on a fresh database of the one PostgreSQL server that
 * test/helpers/pg-global-setup.ts starts for the run — it fails the run if it cannot start).
 */
const ON_POSTGRES = [
  'test/api/idempotency.test.ts',
  'test/api/rate-limit.test.ts',
  'test/api/errors.test.ts',
  'test/wallet/transfers.test.ts',
  'test/wallet/money.test.ts',
  'test/wallet/idempotency.test.ts',
  'test/messaging/messaging.test.ts',
  'test/messaging/conversations-paging.test.ts',
  'test/api/quotas.test.ts',
];

/** Tests that need PostgreSQL itself (they share the `postgres` project's server). */
const POSTGRES_ONLY = [
  'test/store/pg-store.test.ts',
  'test/store/pg-commit-feed.test.ts',
  'test/store/pg-outage.test.ts',
  'test/api/shared-database.test.ts',
  'test/cluster/three-processes.test.ts',
  'test/cluster/bot-takeover.test.ts',
  'test/cli/store-transfer.test.ts',
  'test/reliability/crash-loop-postgres.test.ts',
  'test/reliability/fuzz-postgres.test.ts',
  'test/bots/bots-on-postgres.test.ts',
  'test/bots/push-across-processes.test.ts',
  'test/cluster/memory-lease.test.ts',
  'test/bots/dialogs-postgres.test.ts',
];

/** `pinbot/…` as this repository's plugins and tests import it: the sources, never a stale dist/. */
const src = (file: string) => fileURLToPath(new URL(`./src/${file}`, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^pinbot$/, replacement: src('index.ts') },
      { find: /^pinbot\/plugin$/, replacement: src('plugin-api/index.ts') },
      { find: /^pinbot\/testing$/, replacement: src('testing/index.ts') },
    ],
  },
  test: {
    // the CLI the tests spawn (bin/pinbot.js) runs dist/ when it is built from the current
    // sources, else src/ through tsx (test/helpers/cli-global-setup.ts); never a stale dist/
    globalSetup: ['test/helpers/cli-global-setup.ts'],
    // the longest files first, by test/helpers/test-durations.json, so the two workers end
    // together (PINBOT_RECORD_DURATIONS=1 npx vitest run records them again)
    sequence: { sequencer: DurationSequencer },
    ...(process.env.PINBOT_RECORD_DURATIONS === '1' ? { reporters: ['default', './test/helpers/sequencer.ts'] } : {}),
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
    // one worker process for many files, the repository's modules loaded afresh for each file
    // (test/helpers/fresh-modules.ts says what is and is not shared)
    isolate: false,
    setupFiles: ['test/helpers/fresh-modules.ts'],
    unstubEnvs: true,
    unstubGlobals: true,
    projects: [
      {
        extends: true,
        test: {
          name: 'file',
          include: ['test/**/*.test.ts', 'plugins/**/*.test.ts'],
          exclude: [...POSTGRES_ONLY, '**/node_modules/**'],
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: [...ON_POSTGRES, ...POSTGRES_ONLY],
          // each file in a process of its own: these files set their database through the
          // environment and spawn servers; the CPU a shared process would save is small here
          isolate: true,
          env: { PINBOT_TEST_DRIVER: 'postgres' },
          globalSetup: ['test/helpers/pg-global-setup.ts'],
        },
      },
    ],
  },
});
