import type { Logger } from 'pino';
import { createClient } from '../../client/client.js';
import { createRateBudget, type RateBudget } from '../../client/rate-budget.js';
import type { UserRef } from '../../client/types.js';
import { waitingOffTheClock } from '../../util/step-timeout.js';
import type { Identity } from '../bot/identity.js';
import type { CompiledBot } from '../define/bot.js';
import type { HostOptions } from './host-options.js';

/** What finding one bot's identity needs from its host. */
export interface BotIdentityContext {
  host: HostOptions;
  bot: CompiledBot;
  /** The server's base URL the bot talks to. */
  base: string;
  log: Logger;
  signal: AbortSignal;
  /** Rate budgets by server and user: bots acting as one user share one (the server counts every key of a user together). */
  budgets: Map<string, RateBudget>;
  /** Users the bots of this host act as (for `ignore_bots`): the bot's is added. */
  botUsers: Set<string>;
}

/**
 * How a bot finds who it is, in one place: its `key:`, or (embedded, `as:`) a key the embedded
 * identity provider gives (which also says who the key is: no `GET /me`); then a client on the
 * rate budget it shares with the other bots of its user.
 */
export async function identifyBot({
  host,
  bot,
  base,
  log,
  signal,
  budgets,
  botUsers,
}: BotIdentityContext): Promise<Identity> {
  let apiKey: string;
  let known: UserRef | undefined;
  let keyId: string | undefined;
  if ('key' in bot.identity) apiKey = bot.identity.key;
  else {
    const r = await host.embedded!.identity.keyFor({
      bot: bot.name,
      as: bot.identity.as,
      createUser: bot.identity.createUser,
    });
    if (r.created)
      log.info(
        { user: r.user.pin_code },
        `bot ${bot.name}: new API key for ${r.user.display_name} (${r.user.pin_code})`,
      );
    apiKey = r.apiKey;
    // the embedded server said who the key is: no GET /me (10,000 bots start faster)
    if (r.user.id) known = { id: r.user.id, display_name: r.user.display_name, pin_code: r.user.pin_code };
    keyId = r.keyId;
  }
  // waits of the client (pacing, Retry-After, backoff) are on the clock, and park the
  // bot's held work while they last (see Clock.hold)
  const sleep = (ms: number, signal?: AbortSignal) =>
    waitingOffTheClock(() => host.clock.sleep(ms, signal, { parked: true }));
  const client = (budget: RateBudget) =>
    createClient({
      baseUrl: base,
      apiKey,
      budget,
      sleep,
      owner: bot.name,
      onRetry: (i) => log.debug(i, 'waiting out a 429'),
      ...host.client,
      // one owner for retries: the loop around each call (docs/architecture.md "Retries")
      retry: { ...host.client?.retry, attempts: 0 },
    });
  const newBudget = () => createRateBudget({ now: () => host.clock.now(), sleep });
  const probe = client(newBudget());
  const me = known ?? (await probe.me({ signal }));
  botUsers.add(me.id);
  // the server counts every key of a user together: bots acting as one user share one budget
  const budgetKey = `${base}\u0000${me.id}`;
  let budget = budgets.get(budgetKey);
  if (!budget) budgets.set(budgetKey, (budget = newBudget()));
  const api = client(budget);
  api.http.lastDate = probe.http.lastDate;
  return { api, me, keyId };
}
