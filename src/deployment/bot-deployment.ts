import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type pg from 'pg';
import type { InProcessTransport } from '../api/in-process.js';
import { systemClock } from '../clock/clock.js';
import type { DomainEnv } from '../domain/env.js';
import type { BotPlacement, BotStorage, ChangeFeed, IdentityProvider } from '../runtime/index.js';
import type { CommitFeed } from '../store/core/commit-signal.js';
import type { Store } from '../store/core/types.js';
import { storeKeyVault } from './bot-key-vault.js';
import { BotLeasing } from './bot-leases.js';
import { fileBotStorage, sharedBotStorage } from './bot-storage.js';
import { embeddedIdentity } from './embedded-identity.js';
import { pgTraceArchive } from './pg-traces.js';
import { userChanges } from './user-changes.js';
import { botKeysDir } from '../util/data-dir.js';

/**
 * What a BotHost inside a server is given: the embedded server, where bots keep what they keep,
 * and (on a database) their placement. */
export interface EmbeddedHostDeps {
  embedded: {
    url: string;
    identity: IdentityProvider;
    changes?: ChangeFeed;
    transport?: InProcessTransport;
  };
  storage: BotStorage;
  placement?: BotPlacement;
}

/** How a process on a shared database takes part in placing the bots (docs/scaling.md). */
export interface LeaseSettings {
  log: Logger;
  /** How long a silent process keeps its bots (`bots.lease_ttl`). */
  ttlMs: number;
}

/** The server a BotHost's embedded bots run in. Internal. */
interface Embedding {
  store: Store;
  commits: CommitFeed;
  env: DomainEnv;
  url: string;
  /** The server's pipeline in process: its bots' requests need no socket (a remote bot's do). */
  transport?: InProcessTransport;
  stateDir: string;
}

/**
 * One process owns every bot (the file store): their keys are files under `stateDir/keys`, their
 * state is in the server's store (a file store of their own for remote bots), their traces are
 * files.
 *
 * @example new BotHost({ ...fileHostDeps({ store, commits, env, url, stateDir }), registry,
 * log, clock, scheduler, stateDir, dir })
 */
export function fileHostDeps(o: Embedding): EmbeddedHostDeps {
  return {
    embedded: {
      url: o.url,
      identity: embeddedIdentity({ store: o.store, env: o.env, keysDir: botKeysDir(o.stateDir) }),
      changes: userChanges(o.commits),
      transport: o.transport,
    },
    storage: fileBotStorage({ embedded: o.store, stateDir: o.stateDir }),
  };
}

/**
 * Several processes on one database: bots are shared out by leases, their keys are kept in the
 * store (`bot_keys`), their state in the shared store fenced by the lease, their traces in
 * `<schema>.bot_traces`, so a bot keeps all of it whichever process runs it, and hears of the
 * pushes other processes queue for it.
 */
export function sharedHostDeps(
  o: Embedding & { db: { pool: pg.Pool; schema: string }; lease?: LeaseSettings },
): EmbeddedHostDeps {
  if (!o.lease) throw new Error('bots on a shared database need lease settings (log, ttl)');
  // process liveness is wall time, whatever the bots' clock (docs/scaling.md)
  const placement = new BotLeasing({
    store: o.store,
    clock: systemClock,
    log: o.lease.log,
    ttlMs: o.lease.ttlMs,
    label: `${hostname()}:${process.pid}`,
  });
  const vault = storeKeyVault(o.store);
  return {
    embedded: {
      url: o.url,
      identity: embeddedIdentity({ store: o.store, env: o.env, keysDir: botKeysDir(o.stateDir), vault }),
      changes: userChanges(o.commits),
      transport: o.transport,
    },
    storage: sharedBotStorage({
      store: o.store,
      commits: o.commits,
      placement,
      archive: (bot) => pgTraceArchive(o.db.pool, o.db.schema, bot),
    }),
    placement,
  };
}
