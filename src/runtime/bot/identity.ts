import type { Logger } from 'pino';
import type { Client } from '../../client/client.js';
import { UnauthorizedError } from '../../client/errors.js';
import type { UserRef } from '../../client/types.js';
import type { Clock } from '../../clock/clock.js';
import type { CompiledBot } from '../define/bot.js';

/** The identity is not usable yet (e.g. its user does not exist): retried, not fatal. */
export class IdentityPending extends Error {}

/** Who a bot is: its client, its user, and the id of its key (changes made with it are its own). */
export interface Identity {
  api: Client;
  me: UserRef;
  keyId?: string;
}

/** What finding a bot's identity needs, and how it reports that the bot waits. */
export interface IdentityContext {
  bot: CompiledBot;
  log: Logger;
  clock: Clock;
  signal: AbortSignal;
  /** Resolves who the bot is. May throw IdentityPending or UnauthorizedError. */
  identify(signal: AbortSignal): Promise<Identity>;
  /** The bot waits (for its user, or for the server): the status message. */
  waiting(message: string): void;
  /** Around the wait: the bot's start is not held work while it waits. */
  pause(): void;
  resume(): void;
}

/**
 * Finds the bot's identity, retrying while its user does not exist (doubling from its `poll`)
 * or the server cannot be reached (doubling from 1 s), up to a minute between tries.
 * `unauthorized`: the key was refused (401); undefined: the bot stopped first.
 */
export async function findIdentity(c: IdentityContext): Promise<Identity | 'unauthorized' | undefined> {
  const { bot, log, signal } = c;
  for (let attempt = 1; !signal.aborted; attempt++) {
    try {
      return await c.identify(signal);
    } catch (err) {
      if (signal.aborted) return undefined;
      if (err instanceof UnauthorizedError) return 'unauthorized';
      const waiting = err instanceof IdentityPending;
      const message = waiting ? err.message : `cannot reach the server: ${(err as Error).message}`;
      c.waiting(message);
      if (attempt === 1 || !waiting) log.warn(`bot ${bot.name} is waiting: ${message}`);
      c.pause();
      await c.clock
        .sleep(Math.min(60_000, (waiting ? bot.pollMs : 1000) * 2 ** Math.min(attempt - 1, 6)), signal)
        .catch(() => undefined);
      c.resume();
    }
  }
  return undefined;
}

/**
 * How far the server's clock is ahead of the bot's (ms), from the `Date` header of its last
 * answer; 0 when they agree to within the header's precision (a second) or nothing is known.
 * Internal.
 */
export function serverOffset(api: Client, now: number): number {
  const server = Date.parse(api.http.lastDate ?? '');
  if (!Number.isFinite(server)) return 0;
  const offset = server - now;
  return Math.abs(offset) < 2000 ? 0 : offset;
}
