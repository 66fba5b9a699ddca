import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import type { Trace } from '../runtime/index.js';
import { DATA_DIR } from '../util/data-dir.js';
import type { Deployment, DeploymentOptions } from './deployment.js';
import { fileDeployment, tracesFromFiles } from './file.js';

export type { BotDeploymentOptions, Deployment, DeploymentOptions, DriverName } from './deployment.js';
export type { EmbeddedHostDeps, LeaseSettings } from './bot-deployment.js';

/**
 * Opens what a server runs on — the one place that decides file vs PostgreSQL: the store (under
 * the data directory's lock), its commit feed, the clock, the scheduler, the rate-limit counters,
 * the bots' storage and placement, the trace reader. With `store` given, that store is used as a
 * single-process deployment (tests, scenarios, the test kit), with the same commit feed `serve`
 * has. PostgreSQL's driver is loaded only when the config names it.
 *
 * @example
 * const d = await openDeployment({ config, dataDir: './data', log, clock: systemClock });
 * d.commits.subscribe((writes) => …);
 * await d.close();
 */
export async function openDeployment(o: DeploymentOptions): Promise<Deployment> {
  if (o.store || o.config.store.driver !== 'postgres') return fileDeployment(o);
  const { postgresDeployment } = await import('./postgres.js');
  return postgresDeployment(o);
}

/**
 * The stored traces of a bot without a server (offline `pinbot bots trace`): from the database
 * when several processes share one (whichever ran the bot), else from the data directory's
 * history files; with where they were looked for, for the message when there are none.
 */
export async function offlineTraces(o: {
  config: Config;
  dataDir: string;
  name: string;
  limit: number;
}): Promise<{ traces?: Trace[]; where: string }> {
  if (o.config.store.driver === 'postgres') {
    const { tracesFromDatabase } = await import('./postgres.js');
    return {
      traces: await tracesFromDatabase(o.config, o.name, o.limit),
      where: `the database (schema ${o.config.store.schema})`,
    };
  }
  const stateDir = join(o.dataDir, DATA_DIR.bots);
  return { traces: tracesFromFiles(stateDir, o.name, o.limit), where: stateDir };
}
