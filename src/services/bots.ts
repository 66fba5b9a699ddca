import { join, resolve } from 'node:path';
import pg from 'pg';
import type { AdminCommand } from '../admin/commands.js';
import { AdminError } from '../admin/commands.js';
import type { Config } from '../config/schema.js';
import { checkSchemaName } from '../store/postgres/pg-schema.js';
import { parseDuration } from '../util/duration.js';
import { suggest } from '../util/suggest.js';
import { BotHost, readTraces, type Trace, watchBots } from '../runtime/index.js';
import { pluginHostOf } from './registry.js';
import { embeddedHostDeps } from './bot-deployment.js';
import { readPgTraces } from './pg-traces.js';
import type { ServerContext, ServerService } from './types.js';
import { botTraceFile, DATA_DIR } from '../util/data-dir.js';

/** What a bot name can be (it names files). Internal. */
const BOT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The traces of a bot from its history files (the bot need not run). Internal. */
export function tracesFromFiles(stateDir: string, name: string, limit: number): Trace[] | undefined {
  if (!BOT_NAME.test(name)) return undefined;
  const local = readTraces(botTraceFile(stateDir, name, false), limit);
  const remote = readTraces(botTraceFile(stateDir, name, true), limit);
  const all = [...local, ...remote].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0)).slice(-limit);
  return all.length ? all : undefined;
}

/**
 * The traces of a bot that does not run in this process: from the database when several
 * processes share one (another process may run it), else from the history files. Internal.
 */
async function storedTraces(ctx: ServerContext, name: string, limit: number): Promise<Trace[] | undefined> {
  if (!ctx.postgres) return tracesFromFiles(join(ctx.dataDir, DATA_DIR.bots), name, limit);
  if (!BOT_NAME.test(name)) return undefined;
  const traces = await readPgTraces(ctx.postgres.pool, ctx.postgres.schema, name, limit);
  return traces.length ? traces : undefined;
}

/**
 * The traces of a bot in the database of `config.store` (driver postgres), without a server:
 * offline `pinbot bots trace`. One connection, closed before returning.
 */
export async function tracesFromDatabase(config: Config, name: string, limit: number): Promise<Trace[] | undefined> {
  if (!BOT_NAME.test(name)) return undefined;
  if (!config.store.url) throw new AdminError('store.driver is postgres but store.url is not set');
  const pool = new pg.Pool({ connectionString: config.store.url, max: 1 });
  try {
    const traces = await readPgTraces(pool, checkSchemaName(config.store.schema), name, limit);
    return traces.length ? traces : undefined;
  } finally {
    await pool.end();
  }
}

const limitOf = (args: Record<string, unknown>) => {
  const n = args.limit === undefined ? 20 : Number(args.limit);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new AdminError('--limit must be a whole number from 1 to 1000');
  return n;
};

/**
 * The admin commands of a bot host: `bots.status`, `bots.trace`, `bots.reload`, `bots.pause`
 * and `bots.resume`. `serve` adds them with its bots; a scenario's server (kept up by
 * `scenario run --keep`) with the host of its world, so `pinbot bots trace --data DIR` works there too.
 */
export function botAdminCommands(host: () => BotHost | undefined, ctx: () => ServerContext | undefined): Record<string, AdminCommand> {
  return {
    'bots.status': async () => ({ bots: host()?.status() ?? [] }),
    'bots.reload': async () => ({ bots: (await host()?.reload()) ?? [] }),
    'bots.pause': async (_ctx, args) => {
      const name = String(args.name ?? '');
      if (ctx()?.postgres) throw new AdminError('with several processes on a database, pause a bot with enabled: false in its file');
      if (!(await host()?.pause(name))) throw new AdminError(`no bot named ${name} runs here to pause; see \`pinbot bots list\``);
      return { bot: name, status: 'paused' };
    },
    'bots.resume': async (_ctx, args) => {
      const name = String(args.name ?? '');
      if (!(await host()?.resume(name))) throw new AdminError(`no bot named ${name} is paused`);
      return { bot: name, status: 'resumed' };
    },
    'bots.trace': async (_ctx, args) => {
      const name = String(args.name ?? '');
      const limit = limitOf(args);
      // with several processes, a history in memory here is current only while the bot runs here
      const here = ctx()?.postgres && !host()?.runner(name) ? undefined : host()?.traces(name, limit);
      const traces = here ?? (ctx() ? await storedTraces(ctx()!, name, limit) : undefined);
      if (!traces) {
        // `tip_jar` for `tip-jar`: name the bot that was meant
        const like = suggest(name, (host()?.status() ?? []).flatMap((b) => (b.name ? [b.name] : [])));
        throw new AdminError(`no bot named ${name} has traces; ${like ? `did you mean "${like}"? ` : ''}see \`pinbot bots list\``);
      }
      // `serve --virtual-clock`: a change held until the clock moves is not a run yet: say so
      const waiting = host()?.waitingForClock(name);
      return { bot: name, traces, ...(waiting ? { waiting } : {}) };
    },
  };
}

/**
 * The bots of `config.bots.dir`, started with the server (`serve --no-bots` leaves this service
 * out; `serve --dry-run` makes every bot a dry run). Bots reach this
 * server over HTTP through the typed client, like any remote bot. The folder is watched: a
 * changed file is re-validated and swapped in, a removed one stops its bot. Adds the admin
 * commands `bots.status`, `bots.trace`, `bots.reload`, `bots.pause` and `bots.resume`. With PostgreSQL (`ctx.postgres`)
 * bots' keys and traces live in the database, so `bots.trace` shows any bot's history, whichever
 * process runs it.
 */
export function createBotsService(): ServerService {
  let host: BotHost | undefined;
  let ctxRef: ServerContext | undefined;
  let unwatch: (() => void) | undefined;
  let unrelay: (() => void) | undefined;
  const commands = botAdminCommands(
    () => host,
    () => ctxRef,
  );
  return {
    name: 'bots',
    commands,
    async start(ctx) {
      const config = ctx.env.config;
      ctxRef = ctx; // `bots.trace` reads the stored history also of bots that do not run here
      if (!config.bots.enabled) return;
      const log = ctx.log.child({ service: 'bots' });
      const dir = resolve(config.bots.dir);
      const stateDir = join(ctx.dataDir, DATA_DIR.bots);
      // the deployment (file store, or several processes on one database) is decided there, once
      const deps = embeddedHostDeps({ store: ctx.store, env: ctx.env, url: ctx.url, stateDir, postgres: ctx.postgres, lease: { log, ttlMs: parseDuration(config.bots.lease_ttl) ?? 15_000 } });
      host = new BotHost({
        registry: ctx.registry,
        log,
        clock: ctx.clock,
        scheduler: ctx.scheduler,
        stateDir,
        dir,
        ...deps,
        envAllow: config.bots.env_allow,
        onTrace: ctx.signals && ((t) => ctx.signals!.emit('trace', t)),
        allowedServers: config.bots.allowed_servers,
        dryRun: ctx.dryRun,
        stepTimeoutMs: parseDuration(config.runtime.step_timeout),
        safetyPollMs: parseDuration(config.runtime.safety_poll),
      });
      // pushes (plugins' push sources) for bots placed in other processes go through the shared store
      const plugins = deps.placement ? pluginHostOf(ctx.registry) : undefined;
      const running = host;
      plugins?.relayTo({ push: (trigger, event, only) => running.pushElsewhere(trigger, event, only), listeners: (trigger) => running.listenersElsewhere(trigger) });
      unrelay = () => plugins?.relayTo(undefined);
      const report = await host.start();
      const invalid = report.filter((b) => b.status === 'invalid');
      const elsewhere = report.filter((b) => b.status === 'elsewhere').length;
      log.info({ dir, bots: report.length, invalid: invalid.length, elsewhere }, `bots: ${report.length - invalid.length - elsewhere} of ${report.length} started from ${dir}${elsewhere ? `; ${elsewhere} run in other processes on the database` : ''}${invalid.length ? `; ${invalid.length} invalid (problems above; fix the file and it reloads)` : ''}`);
      unwatch = watchBots(dir, () => void host?.reload().catch((err) => log.error({ err }, 'bots reload failed')));
    },
    async stop() {
      unrelay?.();
      unwatch?.();
      await host?.stop();
      host = undefined;
    },
  };
}
