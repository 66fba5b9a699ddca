import type { TestProject } from 'vitest/node';
import { startPostgres } from './postgres-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the `postgres` database of the server this project's tests share. */
    pgAdminUrl: string;
  }
}

/**
 * Global setup of the `postgres` test project: one real PostgreSQL server for the run (tests
 * make a database each). It throws when the server cannot start: the run fails, never skips.
 */
export default async function setup(project: TestProject) {
  const server = await startPostgres();
  project.provide('pgAdminUrl', server.url());
  return () => server.stop();
}
