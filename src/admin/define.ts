import type { Logger } from 'pino';
import type { Scheduler } from '../clock/scheduler.js';
import type { DomainEnv } from '../domain/env.js';
import type { KeyUsage } from '../domain/users/keys.js';
import type { Store } from '../store/core/types.js';

/** The arguments of a command as they arrive (from the socket, the CLI or the console): unchecked. */
export type AdminArgs = Record<string, unknown>;

/** What an operator command can reach: a running server's, or one opened by the CLI. */
export interface AdminContext {
  store: Store;
  env: DomainEnv;
  log?: Logger;
  keyUsage?: KeyUsage;
  /** Present when a server runs (clock commands need it). */
  scheduler?: Scheduler;
  /** Extra commands of a running server (bots traces …), by name. */
  extra?: CommandTable;
}

declare const ARGS: unique symbol;

/**
 * An operator command. It gets its arguments as sent and checks them itself (they come over a
 * socket); `A` is what a caller passes and `R` what it answers — types only, so the CLI and the
 * console call a command by name and get its result typed, without a cast.
 */
export interface AdminCommand<A extends AdminArgs = AdminArgs, R = unknown> {
  (ctx: AdminContext, args: AdminArgs): Promise<R>;
  /** Type only: the arguments a caller passes. Never set. */
  readonly [ARGS]?: A;
}

/** Commands by name. */
export type CommandTable = Record<string, AdminCommand<any, unknown>>;

/** The arguments a caller passes to `C`. */
export type ArgsOf<C> = C extends AdminCommand<infer A, unknown> ? A : never;
/** What `C` answers. */
export type ResultOf<C> = C extends (ctx: AdminContext, args: AdminArgs) => Promise<infer R> ? R : never;

/**
 * Defines a command: `A` is what a caller passes (the CLI, the console); what it answers is
 * inferred from `run`, which sees the arguments unchecked (each field may be missing or of another
 * type: check it, and say which flag is wrong).
 *
 * @example
 * const ping = defineCommand<{ name: string }>()(async (_ctx, args) => ({ pong: String(args.name) }));
 */
export function defineCommand<A extends AdminArgs = Record<never, never>>() {
  return <R>(run: (ctx: AdminContext, args: AdminArgs) => Promise<R>): AdminCommand<A, R> => run;
}
