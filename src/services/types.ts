import type { InProcessTransport } from '../api/in-process.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { CommandTable } from '../admin/commands.js';
import type { Clock } from '../clock/clock.js';
import type { Scheduler } from '../clock/scheduler.js';
import type { DomainEnv } from '../domain/env.js';
import type { ProjectRegistry } from './registry.js';
import type { Deployment } from '../deployment/index.js';
import type { Store } from '../store/core/types.js';
import type { Signals } from './signals.js';
import type { EdgeCall } from '../util/http.js';

/** What a service is given when the server starts it. */
export interface ServerContext {
  store: Store;
  env: DomainEnv;
  clock: Clock;
  scheduler: Scheduler;
  log: Logger;
  dataDir: string;
  /** Base URL of this server once it listens. */
  url: string;
  /**
   * This server's API in process (api/in-process.ts): a client transport into its own request
   * pipeline, with no socket; its embedded bots use it. Absent where there is no server.
   */
  inProcess?: InProcessTransport;
  /** The triggers, conditions, actions and sources of this project (built-ins and plugins), frozen. */
  registry: ProjectRegistry;
  /** Every bot is a dry run (`serve --dry-run`). */
  dryRun: boolean;
  /**
   * Serves the requests under `prefix` by whole path segments (`/console`: not `/consoles`; a
   * prefix ending in `/`, such as `/plugins/`, takes all that start with it) with `handler`, beside
   * the API (plugins' HTTP routes), behind its anonymous rate limit — except the requests
   * `authenticated` vouches for (checked before the handler; a valid session, say). Absent where
   * there is no HTTP server.
   */
  mount?(
    prefix: string,
    handler: (req: IncomingMessage, res: ServerResponse, call: EdgeCall) => void,
    authenticated?: (req: IncomingMessage) => boolean,
  ): void;
  /**
   * Where the data lives (file or PostgreSQL shared by several processes), decided once by
   * `openDeployment`: the bots' storage and placement, stored traces (docs/scaling.md).
   */
  deployment: Pick<Deployment, 'driver' | 'shared' | 'commits' | 'botHostDeps' | 'storedTraces'>;
  /** What services tell each other as it happens (bot traces, jobs run); absent outside a server. */
  signals?: Signals;
  /**
   * Runs an operator command of this server (the admin socket's, with those of the services
   * started before), as the admin socket would. Absent outside a server.
   */
  command?(name: string, args?: Record<string, unknown>): Promise<unknown>;
}

/** Something the server starts and stops with itself (UBI, bots, plugins…). */
export interface ServerService {
  name: string;
  start(ctx: ServerContext): Promise<void> | void;
  stop?(): Promise<void> | void;
  /** Admin commands it adds (e.g. `bots.trace`). */
  commands?: CommandTable;
}
