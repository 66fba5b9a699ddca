import { defineConfig } from 'vitest/config';

/**
 * API tests that run a second time on PostgreSQL (project `postgres`: PINBOT_TEST_DRIVER makes
 * test/helpers/api.ts open a PgStore on a fresh database of one server started for the run).
 */
const ON_POSTGRES = [
  'test/api/idempotency.test.ts',
  'test/api/rate-limit.test.ts',
  'test/api/errors.test.ts',
  'test/wallet/transfers.test.ts',
  'test/wallet/money.test.ts',
  'test/wallet/idempotency.test.ts',
  'test/messaging.test.ts',
  'test/conversations-paging.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'file', include: ['test/**/*.test.ts'] } },
      {
        extends: true,
        test: { name: 'postgres', include: ON_POSTGRES, env: { PINBOT_TEST_DRIVER: 'postgres' }, globalSetup: ['test/helpers/pg-global-setup.ts'] },
      },
    ],
  },
});
