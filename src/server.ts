import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server as NetServer } from 'node:net';
import type { Logger } from 'pino';
import { listenAdmin } from './admin/socket.js';
import { runAdminCommand, type AdminCommand } from './admin/commands.js';
import { createApp } from './api/app.js';
import { closeAfterAnswers } from './api/edge/response.js';
import type { RouteDef } from './api/route.js';
import { systemClock, type Clock } from './clock/clock.js';
import { loadConfig } from './config/load.js';
import type { Config } from './config/schema.js';
import type { DomainEnv } from './domain/env.js';
import { KeyUsage } from './domain/users/keys.js';
import { createHttpServer, inProcessServer } from './http-server.js';
import { createLogger } from './log.js';
import { ListenError, PortInUseError } from './server-errors.js';
import { defaultServices } from './services/index.js';
import { buildRegistry, type ProjectRegistry } from './services/registry.js';
import type { ServerContext, ServerService } from './services/types.js';
import { virtualClockOn } from './deployment/virtual-time.js';
import { openDeployment } from './deployment/index.js';
import { createSignals, type Signals } from './services/signals.js';
import type { Scheduler } from './clock/scheduler.js';
import type { Store } from './store/core/types.js';

export type { ServerContext, ServerService } from './services/types.js';

/**
 * The parts of a server. Each part may be given (tests, scenarios and the test kit give a
 * virtual clock, a registry with their plugins, their own services); what is not given is made
 * from the data directory and the config.
 */
export interface ServerOptions {
  dataDir: string;
  /** config.yaml path (ignored when `config` is given). */
  configFile?: string;
  config?: Config;
  host?: string;
  port?: number;
  /**
   * The store (default: the one `config.store` names: the journaled file store of `dataDir`,
   * opened under its lock, or PostgreSQL). */
  store?: Store;
  /** The clock (default: the system clock, or a virtual one with `virtualClock`). */
  clock?: Clock;
  /**
   * Run on a virtual clock: at this time in ms, or with `true` at the virtual time saved in the
   * store (where the clock was when the server last ran), else now; ignored with `clock`.
   */
  virtualClock?: boolean | number;
  /** The registry bots are validated and run with (default: `buildRegistry({ config, log })`). */
  registry?: ProjectRegistry;
  /** Every bot is a dry run: rules are evaluated, actions logged, none taken. */
  dryRun?: boolean;
  /** Load no plugins (`serve --safe`; ignored when `registry` is given). */
  safe?: boolean;
  /** Run the bots of `config.bots.dir` (default true; ignored when `services` is given). */
  bots?: boolean;
  log?: Logger;
  /** Services to start (default: `defaultServices({ bots })`: UBI, then bots). */
  services?: readonly ServerService[];
  /** The /api/v1 routes (default: all); tests add their own. */
  routes?: readonly RouteDef[];
  /** Longest wait for in-flight requests at shutdown before connections are cut (default 30 s). */
  shutdownGraceMs?: number;
}

export interface RunningServer extends ServerContext {
  port: number;
  /** The HTTP server (for tests and for services that attach to it). */
  http: Server;
  close(): Promise<void>;
}

export { ListenError, PortInUseError } from './server-errors.js';

/** The HTTP server of a running server, listening. Internal. */
interface HttpEdge {
  http: Server;
  port: number;
  url: string;
  /**
   * Closes gracefully: no new connections, in-flight requests finish (their responses say
   * `Connection: close`), idle keep-alive connections are closed at once rather than after their
   * 5 s timeout, and whatever is still open after `graceMs` is cut.
   */
  close(graceMs: number): Promise<void>;
}

/** Serves `listener` on host:port with node's server as `createHttpServer` sets it up (its limits). Internal. */
async function listenHttp(o: {
  listener: RequestListener;
  config: Config;
  host: string;
  port: number;
}): Promise<HttpEdge> {
  // nothing is tracked per request: at close, every answer whose head is written from then on
  // says `Connection: close` (api/edge/response.ts closeAfterAnswers: in flight, pipelined, new)
  const http: Server = createHttpServer(o.listener, o.config.server);
  const { host, port } = o;
  await new Promise<void>((resolve, reject) => {
    http.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new PortInUseError(host, port) : new ListenError(host, port, err)),
    );
    http.listen(port, host, () => resolve());
  });
  const actual = (http.address() as AddressInfo).port;
  return {
    http,
    port: actual,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${actual}`,
    close(graceMs) {
      closeAfterAnswers(http);
      return new Promise<void>((resolve) => {
        const poll = setInterval(() => http.closeIdleConnections(), 25);
        const cut = setTimeout(() => http.closeAllConnections(), graceMs);
        http.close(() => {
          clearInterval(poll);
          clearTimeout(cut);
          resolve();
        });
        http.closeIdleConnections();
      });
    },
  };
}

/**
 * The services of a server: started in order, each adding its admin commands to `commands` as it
 * starts (a later service's commands can call an earlier one's), stopped in reverse — only
 * those that started, also after one failed to start. Internal.
 */
class Services {
  readonly commands: Record<string, AdminCommand> = {};
  private readonly started: ServerService[] = [];

  constructor(private readonly log: Logger) {}

  async start(ctx: ServerContext, services: readonly ServerService[]): Promise<void> {
    for (const s of services) {
      await s.start(ctx);
      this.started.push(s);
      Object.assign(this.commands, s.commands ?? {});
    }
  }

  async stop(): Promise<void> {
    for (const s of this.started.splice(0).reverse()) {
      try {
        await s.stop?.();
      } catch (err) {
        this.log.error({ err, service: s.name }, 'service failed to stop');
      }
    }
  }
}

/** A scheduler whose jobs signal `job` when they have run (the console lists them). Internal. */
function signalledScheduler(inner: Scheduler, signals: Signals): Scheduler {
  return {
    add: (name, expression, fn, opts = {}) =>
      inner.add(
        name,
        expression,
        async (at) => {
          let ok = false;
          try {
            await fn(at);
            ok = true;
          } finally {
            signals.emit('job', { name, at: at.toISOString(), ok });
          }
        },
        opts,
      ),
    stop: () => inner.stop(),
  };
}

/**
 * The clock a server runs on: the one given; a virtual one with `virtualClock`, going on from
 * the time saved in the store (a restart never goes back in time); else the system's. Internal.
 */
function clockOf(o: ServerOptions): Clock | ((opened: Store) => Clock) {
  if (o.clock) return o.clock;
  if (!o.virtualClock) return systemClock;
  const at = typeof o.virtualClock === 'number' ? o.virtualClock : undefined;
  return (opened) => virtualClockOn(opened, at);
}

/**
 * The server's own upkeep: the nightly sweep of old idempotency records (a cron job, on the
 * server's clock) and key use written in batches once a minute. Returns its stop. Internal.
 */
function housekeeping(o: {
  scheduler: Scheduler;
  log: Logger;
  sweep: () => Promise<unknown>;
  flushKeyUsage: () => Promise<unknown>;
}): () => void {
  o.scheduler.add('idempotency-sweep', '17 3 * * *', async () => void (await o.sweep()), {
    onError: (err) => o.log.error({ err }, 'idempotency sweep failed'),
  });
  const flushTimer = setInterval(
    () => void o.flushKeyUsage().catch((err) => o.log.error({ err }, 'key usage flush failed')),
    60_000,
  );
  flushTimer.unref();
  return () => clearInterval(flushTimer);
}

/**
 * Starts the API on a data directory: opens the store (taking its lock), serves HTTP, the
 * admin socket and the registered services. `close()` finishes in-flight requests, writes the
 * snapshot and releases the directory.
 *
 * @example
 * const server = await startServer({ dataDir: './data', port: 0 });
 * console.log(server.url);
 * await server.close();
 */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const config = options.config ?? loadConfig(options.configFile ?? 'config.yaml');
  const log = options.log ?? createLogger({ level: config.log.level, bufferBytes: config.log.buffer_bytes });
  const registry = options.registry ?? (await buildRegistry({ config, log, safe: options.safe }));
  // where the data lives (file or PostgreSQL) is decided there, once
  const deployment = await openDeployment({
    config,
    dataDir: options.dataDir,
    log,
    store: options.store,
    clock: clockOf(options),
  });
  const { store, clock, commits } = deployment;
  // commits are heard of: embedded bots are woken by the changes that concern them, and a
  // virtual clock fires heartbeat polls only after something changed
  if (clock.virtual) commits.subscribe(() => clock.touch());
  const signals = createSignals();
  const scheduler = signalledScheduler(deployment.scheduler, signals);
  const env: DomainEnv = { clock, config };
  const keyUsage = new KeyUsage();
  // paths other services serve beside the API (plugins' routes under /plugins/) go through the
  // app's edge: request id and log, the anonymous rate limit (`mount`)
  const { listener, idempotency, mount } = createApp({
    store,
    commits,
    env,
    log,
    keyUsage,
    routes: options.routes,
    shared: deployment.rateStore && { rateStore: deployment.rateStore },
  });
  let edge: HttpEdge;
  try {
    edge = await listenHttp({
      listener,
      config,
      host: options.host ?? config.server.host,
      port: options.port ?? config.server.port,
    });
  } catch (err) {
    await deployment.close();
    throw err;
  }
  const { http, url } = edge;
  const services = new Services(log);
  const commands = services.commands;
  const ctx: ServerContext = {
    store,
    env,
    clock,
    scheduler,
    log,
    dataDir: options.dataDir,
    url,
    // the embedded bots' requests: the same pipeline as `listener`, without a socket
    inProcess: inProcessServer(listener, url),
    registry,
    dryRun: options.dryRun === true,
    mount,
    deployment,
    signals,
    command: (name, args = {}) =>
      runAdminCommand({ store, env, log, keyUsage, scheduler, extra: commands }, name, args),
  };

  const stopHousekeeping = housekeeping({
    scheduler,
    log,
    sweep: () => idempotency.sweep(),
    flushKeyUsage: () => keyUsage.flush(store),
  });

  let admin: NetServer | undefined;
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= shutdown());
  const shutdown = async () => {
    stopHousekeeping();
    await services.stop();
    scheduler.stop();
    // the embedded bots' requests in process are waited for as the connections' are
    const grace = options.shutdownGraceMs ?? 30_000;
    await Promise.all([edge.close(grace), ctx.inProcess?.idle(grace)]);
    await new Promise<void>((resolve) => (admin ? admin.close(() => resolve()) : resolve()));
    try {
      await keyUsage.flush(store);
    } finally {
      await deployment.close();
    }
  };
  try {
    admin = await listenAdmin(options.dataDir, { store, env, log, keyUsage, scheduler, extra: commands });
    await services.start(ctx, options.services ?? defaultServices({ bots: options.bots !== false }));
  } catch (err) {
    await close();
    throw err;
  }
  log.info({ url, dataDir: options.dataDir, virtualClock: clock.virtual }, `listening on ${url}`);
  return { ...ctx, port: edge.port, http, close };
}
