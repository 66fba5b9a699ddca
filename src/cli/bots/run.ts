import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { AdminError } from '../../admin/errors.js';
import { loadConfig } from '../../config/load.js';
import { systemClock } from '../../clock/clock.js';
import { createScheduler } from '../../clock/scheduler.js';
import { createLogger } from '../../log.js';
import { BotHost, watchBots } from '../../runtime/index.js';
import { installProcessGuard } from '../../plugin-api/guard.js';
import { buildRegistry } from '../../services/registry.js';
import { parseDuration } from '../../util/duration.js';
import { DATA_DIR } from '../../util/data-dir.js';
import { common, type Common } from './shared.js';

type RunOptions = Common & { server: string; dryRun?: boolean };

/** `pinbot bots run [files...] --server URL`. */
export function registerRun(bots: Command): void {
  common(
    bots
      .command('run')
      .description('run bots alone against a server (remote, or a `pinbot serve` elsewhere)')
      .argument('[files...]')
      .requiredOption('--server <url>', 'base URL of the server, e.g. https://api.example.com')
      .option('--dry-run', 'poll and evaluate for real, log the actions, take none'),
  ).action(runBots);
}

/** Runs the bots until SIGINT or SIGTERM. Internal. */
async function runBots(files: string[], opts: RunOptions): Promise<void> {
  try {
    new URL(opts.server);
  } catch {
    throw new AdminError(`--server must be a URL like http://127.0.0.1:3000, not ${opts.server}`);
  }
  // the file store behind the bots' state is loaded only by the command that runs bots (the
  // runtime itself is not: validate needs its barrel too, for loadBotFile and the registry)
  const { fileBotStorage } = await import('../../deployment/bot-storage.js');
  const config = loadConfig(opts.config);
  const log = createLogger({ level: config.log.level });
  const explicit = files.length > 0;
  const dir = explicit ? undefined : resolve(config.bots.dir);
  const stateDir = join(resolve(opts.data), DATA_DIR.bots);
  const registry = await buildRegistry({ config, log });
  const scheduler = createScheduler(systemClock);
  // plugins run here too (no HTTP routes: there is no server in this process)
  const plugins = registry.plugins;
  if (plugins?.instances.length) installProcessGuard(() => plugins.instances, log);
  await plugins?.start({ clock: systemClock, scheduler, log });
  const host = new BotHost({
    registry,
    log,
    clock: systemClock,
    scheduler,
    storage: fileBotStorage({ stateDir }),
    files: explicit ? files : undefined,
    dir,
    server: opts.server,
    envAllow: config.bots.env_allow,
    allowedServers: config.bots.allowed_servers,
    dryRun: opts.dryRun === true,
    stepTimeoutMs: parseDuration(config.runtime.step_timeout),
  });
  const report = await host.start();
  const running = report.filter((b) => b.status !== 'invalid' && b.status !== 'disabled');
  log.info(`bots: ${running.length} of ${report.length} started against ${opts.server}`);
  if (running.length === 0) {
    await host.stop();
    await registry.plugins?.stop();
    throw new AdminError('no valid bot to run; see the problems above (`pinbot bots validate`)');
  }
  // edited files are validated and swapped in (a bot stopped by a 401 starts again once its file
  // is fixed); the watcher keeps the process alive even when every bot has stopped
  const unwatch = watchBots(
    dir ?? files,
    () => void host.reload().catch((err) => log.error({ err }, 'reload failed')),
    { persistent: true },
  );
  const stop = () => {
    unwatch();
    void host
      .stop()
      .then(() => registry.plugins?.stop())
      .then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
