import type { InProcessTransport } from '../api/in-process.js';
import type { Store as RateLimitStore } from 'express-rate-limit';
import type { Logger } from 'pino';
import type { Clock } from '../clock/clock.js';
import type { Scheduler } from '../clock/scheduler.js';
import type { Config } from '../config/schema.js';
import type { DomainEnv } from '../domain/env.js';
import type { Trace } from '../runtime/index.js';
import type { CommitFeed } from '../store/core/commit-signal.js';
import type { Store } from '../store/core/types.js';
import type { EmbeddedHostDeps, LeaseSettings } from './bot-deployment.js';

/** Which store a deployment runs on (`store.driver` of config.yaml). */
export type DriverName = Config['store']['driver'];

/** What the bots of a server are placed with: the server's URL, where they keep their state. */
export interface BotDeploymentOptions {
  env: DomainEnv;
  /** Base URL of the embedded server. */
  url: string;
  /**
   * The embedded server's pipeline in process (api/in-process.ts): its bots' requests go there
   * with no socket. Without it they go to `url` over HTTP.
   */
  transport?: InProcessTransport;
  /** `DATA/bots`: key files, trace files, remote bots' state. */
  stateDir: string;
  /** How this process takes part in placing bots (used on a shared database only). */
  lease?: LeaseSettings;
}

/**
 * Everything a server needs that depends on where its data lives, decided once by
 * `openDeployment`: nothing else in pinbot branches on the store's driver.
 *
 * - `file` (the default): one process owns the data directory (under its lock); rate limits
 *   count in memory, cron jobs run here, bots' keys and traces are files.
 * - `postgres`: several processes share one database; rate limits count in it, each cron job
 *   runs once per due time whichever process fires first, bots are leased out between the
 *   processes and keep their keys and traces in the database (docs/scaling.md).
 */
export interface Deployment {
  readonly driver: DriverName;
  /** Several processes may share the store (bots are leased; `bots.pause` is refused). */
  readonly shared: boolean;
  /** The store every part of the server writes through; its commits are told to `commits`. */
  readonly store: Store;
  /** Every committed transaction of `store` (and, when shared, of the other processes). */
  readonly commits: CommitFeed;
  /** The server's clock: the one given, or one made from the store (a saved virtual time). */
  readonly clock: Clock;
  /** Cron jobs on `clock`. */
  readonly scheduler: Scheduler;
  /** Rate-limit counters shared by the processes (absent: counted in this process). */
  readonly rateStore?: (bucket: string) => RateLimitStore;
  /** What a BotHost inside this server is given: identity, change feed, storage, placement. */
  botHostDeps(o: BotDeploymentOptions): EmbeddedHostDeps;
  /** The stored traces of a bot, whether or not it runs here (newest `limit`, oldest first). */
  storedTraces(name: string, limit: number): Promise<Trace[] | undefined>;
  /** Closes the store and whatever was opened with it (the lock of the data directory). */
  close(): Promise<void>;
}

/** How a deployment is opened. */
export interface DeploymentOptions {
  config: Config;
  dataDir: string;
  log: Logger;
  /** A store to run on instead of the one `config.store` names (tests, scenarios, the test kit). */
  store?: Store;
  /** The clock, or how to make it from the opened store (a virtual clock goes on from the time it saved). */
  clock: Clock | ((opened: Store) => Clock);
  /** What a transaction's commit is attributed to (the API key of the request that made it). */
  cause?: () => unknown;
}
