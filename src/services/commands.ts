import type { adminCommands, ArgsOf, ResultOf } from '../admin/commands.js';
import type { BotCommands } from './bots.js';
import type { PluginCommands } from './plugins.js';
import type { ServerContext } from './types.js';

/** Every operator command of a server with its bots and plugins, by name: what each takes and answers. */
export type ServerCommands = typeof adminCommands & BotCommands & PluginCommands;

/** The name of a server's command. */
export type CommandName = keyof ServerCommands & string;

/** A command called by name, its arguments and its answer typed by the command's definition. */
export type CallCommand<T> = <N extends keyof T & string>(
  name: N,
  ...args: Record<never, never> extends ArgsOf<T[N]> ? [args?: ArgsOf<T[N]>] : [args: ArgsOf<T[N]>]
) => Promise<ResultOf<T[N]>>;

/**
 * `ctx.command` typed by the server's commands: the one place the answer of a command called by
 * name gets its type (the command's own definition says it).
 *
 * @example const { bots } = await commandsOf(ctx)('bots.status', {});
 */
export function commandsOf(ctx: Pick<ServerContext, 'command'>): CallCommand<ServerCommands> {
  return (name, ...args) => {
    if (!ctx.command) return Promise.reject(new Error('this server runs no operator commands'));
    return ctx.command(name, args[0] ?? {}) as Promise<never>;
  };
}
