import { type CommandTable, defineCommand } from '../admin/commands.js';
import { installProcessGuard } from '../plugin-api/guard.js';
import type { PluginHost } from '../plugin-api/host.js';
import type { ServerService } from './types.js';

export interface PluginsServiceOptions {
  /**
   * Catch plugins' stray errors at process level (`uncaughtException`, `unhandledRejection`)
   * so they cannot stop the process (default true; the test kit leaves it to the test runner).
   */
  processGuard?: boolean;
}

/** `plugins.status` (`pinbot plugins list`): each plugin's state, and the problems loading them. */
function pluginCommands(host: () => PluginHost | undefined) {
  return {
    'plugins.status': defineCommand()(async () => ({
      plugins: host()?.status() ?? [],
      problems: host()?.problemLines() ?? [],
    })),
  } satisfies CommandTable;
}

/** The commands of the plugins service, by name. */
export type PluginCommands = ReturnType<typeof pluginCommands>;

/**
 * The plugins of the server's registry, started before the bots and stopped after them: their
 * setup (a failing one disables that plugin only), their HTTP routes under `/plugins/<name>/…`,
 * the process guard, and the admin command `plugins.status` (`pinbot plugins list`).
 *
 * @example startServer({ dataDir, services: [ubiService(), pluginsService(), createBotsService()] })
 */
export function pluginsService({ processGuard = true }: PluginsServiceOptions = {}): ServerService {
  let host: PluginHost | undefined;
  let unguard: (() => void) | undefined;
  const commands = pluginCommands(() => host);
  return {
    name: 'plugins',
    commands,
    async start(ctx) {
      host = ctx.registry.plugins;
      if (!host || host.instances.length === 0) return;
      const log = ctx.log.child({ service: 'plugins' });
      if (processGuard) unguard = installProcessGuard(() => host?.instances ?? [], log);
      ctx.mount?.('/plugins/', (req, res, call) => host!.handle(req, res, call));
      await host.start({ clock: ctx.clock, scheduler: ctx.scheduler, log, store: ctx.store });
      const down = host.status().filter((p) => p.status === 'disabled');
      log.info(
        `plugins: ${host.instances.length - down.length} of ${host.instances.length} ` +
          `running${down.length ? `; disabled: ${down.map((p) => p.name).join(', ')}` : ''}`,
      );
    },
    async stop() {
      await host?.stop();
      unguard?.();
      unguard = undefined;
    },
  };
}
