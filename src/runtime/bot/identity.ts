import type { Logger } from 'pino';
import { createClient, type Client, type ClientOptions } from '../../client/client.js';
import { UnauthorizedError } from '../../client/errors.js';
import { createRateBudget, type RateBudget } from '../../client/rate-budget.js';
import type { UserRef } from '../../client/types.js';
import type { Transport } from '../../client/transport.js';
import type { Clock } from '../../clock/clock.js';
import { waitingOffTheClock } from '../../util/step-timeout.js';
import type { CompiledBot } from '../define/bot.js';
import type { IdentityProvider } from '../ports.js';

/** The identity is not usable yet (e.g. its user does not exist): retried, not fatal. */
export class IdentityPending extends Error {}

/** Who a bot is: its client, its user, and the id of its key (changes made with it are its own). */
export interface Identity {
  api: Client;
  me: UserRef;
  keyId?: string;
}

/** How a bot's runner waits for its identity: its stop, and what it does while it waits. */
export interface IdentityWait {
  signal: AbortSignal;
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
async function findIdentity(
  identify: (signal: AbortSignal) => Promise<Identity>,
  { bot, log, clock }: { bot: CompiledBot; log: Logger; clock: Clock },
  c: IdentityWait,
): Promise<Identity | 'unauthorized' | undefined> {
  const { signal } = c;
  for (let attempt = 1; !signal.aborted; attempt++) {
    try {
      return await identify(signal);
    } catch (err) {
      if (signal.aborted) return undefined;
      if (err instanceof UnauthorizedError) return 'unauthorized';
      const waiting = err instanceof IdentityPending;
      const message = waiting ? err.message : `cannot reach the server: ${(err as Error).message}`;
      c.waiting(message);
      if (attempt === 1 || !waiting) log.warn(`bot ${bot.name} is waiting: ${message}`);
      c.pause();
      await clock
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

/**
 * Where a bot's client talks to: the server's base URL, the headers it adds (an embedded bot's
 * commit-ack token), and for an embedded bot the server's in-process transport. Internal.
 */
interface ServerPlace {
  base: string;
  log: Logger;
  headers?: Record<string, string>;
  transport?: Transport;
}

/** One bot's identity, as its runner sees it (made by BotIdentities). */
export interface BotIdentity {
  /**
   * Who the bot is: its key, its user, and its client (on the rate budget of its user), found
   * as findIdentity says. `unauthorized`: the key was refused; undefined: the bot stopped first.
   */
  find(wait: IdentityWait): Promise<Identity | 'unauthorized' | undefined>;
  /** Whether a user is one that bots act as (for `ignore_bots`). */
  isBot(userId: string): boolean;
}

/**
 * The identities of a host's bots, in one place: a bot's key (its `key:`, or for `as:` the one
 * the embedded server's IdentityProvider gives, which also says who the key is: no `GET /me`),
 * its client, on the rate budget it shares with the other bots of its user (the
 * server counts every key of a user together), and the users bots act as (`ignore_bots`).
 */
export class BotIdentities {
  private readonly budgets = new Map<string, RateBudget>();
  private readonly users = new Set<string>();

  constructor(private readonly o: { clock: Clock; client?: Partial<ClientOptions>; embedded?: IdentityProvider }) {}

  /** The identity of `bot`, talking to the server at `base` (`remote`: not the embedded one). */
  of(bot: CompiledBot, o: ServerPlace & { remote: boolean }): BotIdentity {
    return {
      find: (wait) =>
        findIdentity((signal) => this.identify(bot, o, signal), { bot, log: o.log, clock: this.o.clock }, wait),
      isBot: (id) => this.users.has(id) || (!o.remote && this.o.embedded?.isBotUser?.(id) === true),
    };
  }

  /** After bots were removed: only the users of those that still run (`me`) count as bots. */
  keepOnly(ids: Iterable<string>): void {
    this.users.clear();
    for (const id of ids) this.users.add(id);
  }

  /** Finds who `bot` is and builds its client on its user's budget. Internal. */
  private async identify(
    bot: CompiledBot,
    { base, log, headers, transport }: ServerPlace,
    signal: AbortSignal,
  ): Promise<Identity> {
    const { apiKey, known, keyId } = await this.keyOf(bot, log);
    const { clock } = this.o;
    // waits of the client (pacing, Retry-After, backoff) are on the clock, and park the
    // bot's held work while they last (see Clock.hold)
    const sleep = (ms: number, s?: AbortSignal) => waitingOffTheClock(() => clock.sleep(ms, s, { parked: true }));
    const newBudget = () => createRateBudget({ now: () => clock.now(), sleep });
    const budgetOf = (userId: string) => {
      const key = `${base}\u0000${userId}`;
      let budget = this.budgets.get(key);
      if (!budget) this.budgets.set(key, (budget = newBudget()));
      return budget;
    };
    // one client: a key whose user is not known (`key:`) asks GET /me first, on a budget of its
    // own, then moves onto its user's; the embedded provider says who its keys are (`as:`)
    const api = createClient({
      baseUrl: base,
      apiKey,
      budget: known ? budgetOf(known.id) : newBudget(),
      sleep,
      owner: bot.name,
      onRetry: (i) => log.debug(i, 'waiting out a 429'),
      // an embedded bot's requests go to its server in process (no socket), with the same
      // answers; a transport or fetch the host was given (tests) comes first
      ...(transport && !this.o.client?.fetch ? { transport } : {}),
      ...this.o.client,
      headers,
      // one owner for retries: the loop around each call (docs/architecture.md "Retries")
      retry: { ...this.o.client?.retry, attempts: 0 },
    });
    const me = known ?? (await api.me({ signal }));
    if (!known) api.http.shareBudget(budgetOf(me.id));
    this.users.add(me.id);
    return { api, me, keyId };
  }

  /** The bot's key: its `key:`, or (`as:`) the embedded provider's, with who it is. Internal. */
  private async keyOf(bot: CompiledBot, log: Logger): Promise<{ apiKey: string; known?: UserRef; keyId?: string }> {
    if ('key' in bot.identity) return { apiKey: bot.identity.key };
    const r = await this.o.embedded!.keyFor({
      bot: bot.name,
      as: bot.identity.as,
      createUser: bot.identity.createUser,
    });
    if (r.created)
      log.info(
        { user: r.user.pin_code },
        `bot ${bot.name}: new API key for ${r.user.display_name} (${r.user.pin_code})`,
      );
    // the embedded server said who the key is: no GET /me (10,000 bots start faster)
    const known = r.user.id
      ? { id: r.user.id, display_name: r.user.display_name, pin_code: r.user.pin_code }
      : undefined;
    return { apiKey: r.apiKey, known, keyId: r.keyId };
  }
}
