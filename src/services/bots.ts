import { dialogCommands } from './bot-dialogs.js';
import { join, resolve } from 'node:path';
import { type MemoryArgs, memoryCommand } from './bot-memory.js';
import { botVarsCommand } from './bot-vars.js';
import { AdminError, type CommandTable, defineCommand } from '../admin/commands.js';
import { parseDuration } from '../util/duration.js';
import { suggest } from '../util/suggest.js';
import { BotHost, watchBots } from '../runtime/index.js';
import type { ServerContext, ServerService } from './types.js';
import { DATA_DIR } from '../util/data-dir.js';

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
export function botAdminCommands(host: () => BotHost | undefined, ctx: () => ServerContext | undefined) {
  return {
    'bots.status': defineCommand()(async () => ({ bots: host()?.status() ?? [] })),
    'bots.reload': defineCommand()(async () => ({ bots: (await host()?.reload()) ?? [] })),
    'bots.pause': defineCommand<{ name: string }>()(async (_ctx, args) => {
      const name = String(args.name ?? '');
      if (ctx()?.deployment.shared)
        throw new AdminError('with several processes on a database, pause a bot with enabled: false in its file');
      if (!(await host()?.pause(name)))
        throw new AdminError(`no bot named ${name} runs here to pause; see \`pinbot bots list\``);
      return { bot: name, status: 'paused' };
    }),
    'bots.resume': defineCommand<{ name: string }>()(async (_ctx, args) => {
      const name = String(args.name ?? '');
      if (!(await host()?.resume(name))) throw new AdminError(`no bot named ${name} is paused`);
      return { bot: name, status: 'resumed' };
    }),
    'bots.trace': defineCommand<{ name: string; limit?: string | number }>()(async (_ctx, args) => {
      const name = String(args.name ?? '');
      const limit = limitOf(args);
      // with several processes, a history in memory here is current only while the bot runs here
      const here = ctx()?.deployment.shared && !host()?.runner(name) ? undefined : host()?.traces(name, limit);
      const traces = here ?? (await ctx()?.deployment.storedTraces(name, limit));
      if (!traces) {
        // `tip_jar` for `tip-jar`: name the bot that was meant
        const like = suggest(
          name,
          (host()?.status() ?? []).flatMap((b) => (b.name ? [b.name] : [])),
        );
        throw new AdminError(
          `no bot named ${name} has traces; ${like ? `did you mean "${like}"? ` : ''}see \`pinbot bots list\``,
        );
      }
      // `serve --virtual-clock`: a change held until the clock moves is not a run yet: say so
      const waiting = host()?.waitingForClock(name);
      return { bot: name, traces, ...(waiting ? { waiting } : {}) };
    }),
    'bots.memory': defineCommand<MemoryArgs>()(async (_ctx, args) => {
      const name = String(args.name ?? '');
      const memory = await host()?.memory(name);
      if (!memory) throw new AdminError(`no bot named ${name} is loaded here; see \`pinbot bots list\``);
      return memoryCommand(memory, args);
    }),
    // offline too (the CLI runs it on the store itself): see cli/bots/vars.ts
    'bots.vars': botVarsCommand,
    ...dialogCommands(host),
  } satisfies CommandTable;
}

/** The commands a bot host adds, by name. */
export type BotCommands = ReturnType<typeof botAdminCommands>;

/**
 * The bots of `config.bots.dir`, started with the server (`serve --no-bots` leaves this service
 * out; `serve --dry-run` makes every bot a dry run). Bots reach this
 * server over HTTP through the typed client, like any remote bot. The folder is watched: a
 * changed file is re-validated and swapped in, a removed one stops its bot. Adds the admin
 * commands `bots.status`, `bots.trace`, `bots.reload`, `bots.pause` and `bots.resume`. With
 * PostgreSQL (a shared deployment)
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
      const deps = ctx.deployment.botHostDeps({
        env: ctx.env,
        url: ctx.url,
        // the bots' requests go to this server in process, with the same answers as over HTTP
        transport: ctx.inProcess,
        stateDir,
        lease: { log, ttlMs: parseDuration(config.bots.lease_ttl) ?? 15_000 },
      });
      host = new BotHost({
        registry: ctx.registry,
        log,
        clock: ctx.clock,
        scheduler: ctx.scheduler,
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
      const plugins = deps.placement ? ctx.registry.plugins : undefined;
      const running = host;
      plugins?.relayTo({
        push: (trigger, event, only) => running.pushElsewhere(trigger, event, only),
        listeners: (trigger) => running.listenersElsewhere(trigger),
      });
      unrelay = () => plugins?.relayTo(undefined);
      const report = await host.start();
      const invalid = report.filter((b) => b.status === 'invalid');
      const elsewhere = report.filter((b) => b.status === 'elsewhere').length;
      log.info(
        { dir, bots: report.length, invalid: invalid.length, elsewhere },
        `bots: ${report.length - invalid.length - elsewhere} of ${report.length} ` +
          `started from ${dir}${
            elsewhere ? `; ${elsewhere} run in other processes on the database` : ''
          }${invalid.length ? `; ${invalid.length} invalid (problems above; fix the file and it reloads)` : ''}`,
      );
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
