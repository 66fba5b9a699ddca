import type { Store, Tx } from '../store/core/types.js';
import type { TraceArchive } from './state/traces.js';
import type { Topic } from './contract/types.js';

/** Who an embedded bot is: its user and a key to act as them. */
export interface EmbeddedKey {
  apiKey: string;
  /** The key's id (changes made with it are the bot's own). */
  keyId?: string;
  /** The user the key acts as (with its `id` the bot needs no `GET /me` to know itself). */
  user: { id?: string; display_name: string; pin_code: string };
  /** True when a new key (or user) was made for this call. */
  created: boolean;
}

/**
 * Gives embedded bots (`as:` a user of this server) their API key. The runtime does not make
 * users or keys itself: `serve` gives the host a provider that does (services/), so the runtime
 * reaches the server only through the client. Throws IdentityPending while the user is missing.
 */
export interface IdentityProvider {
  keyFor(req: { bot: string; as: string; createUser: boolean }): Promise<EmbeddedKey>;
  /**
   * Whether a user of the embedded server is one a bot acts as — also a bot that runs in
   * another process on the same database (for `ignore_bots`). Answered from memory.
   */
  isBotUser?(userId: string): boolean;
}

/**
 * Where one bot keeps what survives a restart, as the deployment decides (BotStorage.forBot).
 * The host only asks; it never looks at the driver.
 */
export interface BotStore {
  /**
   * Opens the store its state (cursors, inbox, vars) lives in: the server's own store, a store
   * of its own for a bot of a remote server, or the shared store with every write fenced by the
   * bot's lease (several processes on one database).
   */
  open(): Promise<Store>;
  /**
   * The store `open` gives is the one the bot's requests commit to, one journal made durable in
   * commit order (an embedded bot on the file store): a write of the bot followed by a request
   * is durable once the request's answer is, so the bot does not wait for each write's own fsync
   * (BotState.ordered). False or absent: every write waits for its own durability.
   */
  ordered?: boolean;
  /**
   * Headers its client sends with every request: on an ordered store, the commit-ack token
   * (util/commit-ack.ts), so the server answers its writes once committed — what the bot does
   * next commits after them, so it need not wait for their fsync either.
   */
  headers?: Record<string, string>;
  /**
   * Where its trace history is kept: a JSONL file (kept open across restarts of the bot), or an
   * archive read afresh at each start (on a database, so a bot's history follows it to
   * whichever process runs it).
   */
  traces: { file: string } | { archive: TraceArchive };
  /** Pushes other processes queue in its inbox (bots shared out between processes). */
  inbox?: InboxFeed;
}

/**
 * The one storage question a host asks per bot. `serve` answers it once for the deployment
 * (services/: the file store, or PostgreSQL shared by several processes); `pinbot bots run`
 * answers it with files only.
 */
export interface BotStorage {
  /** Where the bot `name` keeps its state and traces; `remote`: it talks to another server. */
  forBot(name: string, o: { remote: boolean }): BotStore;
  /**
   * The store shared by every process, where a push for a bot that runs in another process is
   * queued (in its inbox). Only deployments that share bots out between processes have one.
   */
  shared?(): Promise<Store>;
  /** Closes the stores it opened for the bots (not the server's own). */
  close(): Promise<void>;
}

/**
 * Changes of the embedded server, by user: a bot subscribes with its user's id and hears which
 * topics (`messages`, `wallet`, `introductions`, `contacts`) changed for it, so it polls the
 * matching sources at once instead of waiting for its interval.
 */
export interface ChangeFeed {
  /** `byKey`: the id of the API key whose request made the change, when one did. */
  subscribe(userId: string, onChange: (topics: ReadonlySet<Topic>, byKey?: string) => void): () => void;
}

/**
 * What the host does when a placement gives it a bot or takes one back (BotPlacement.attach).
 * `run` starts the bot (its state is read afresh); `halt` stops it and resolves once its runs
 * reached a step boundary and nothing more of it is written.
 */
export interface PlacedBots {
  run(name: string): void;
  halt(name: string): Promise<void>;
}

/**
 * Shares the bots out between the processes on one database (driver postgres): each bot runs
 * in exactly one process at a time, under a lease. Without a placement a host runs every bot.
 */
export interface BotPlacement {
  /** Starts taking part; the placement calls `bots.run`/`bots.halt` as leases come and go. */
  attach(bots: PlacedBots): Promise<void>;
  /** The bots this process could run (valid and enabled), after every reload. */
  offer(names: readonly string[]): void;
  /** Whether this process holds the bot's lease now. */
  owns(name: string): boolean;
  /** Who holds the bot's lease (e.g. `host:pid`), when another process does. */
  ownerOf(name: string): string | undefined;
  /**
   * Checked inside every transaction on the bot's state: throws when this process no longer
   * holds the bot, so a process that lost a lease can never write over the new owner.
   */
  fence(name: string): (tx: Tx) => void;
  /** Gives every lease back (halting the bots first) and leaves. */
  stop(): Promise<void>;
}

/**
 * Entries written into bots' inboxes, by bot: with bots shared out between processes, a push
 * for a bot that runs elsewhere is queued in its inbox by the process that received it, and the
 * bot's owner hears of the entry here (once the other process's commit is applied).
 */
export interface InboxFeed {
  subscribe(bot: string, onEntry: (entryId: string) => void): () => void;
}
