import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type pg from 'pg';
import { systemClock } from '../clock/clock.js';
import type { DomainEnv } from '../domain/env.js';
import type { BotPlacement, BotStorage, ChangeFeed, IdentityProvider } from '../runtime/index.js';
import type { Store } from '../store/core/types.js';
import { storeKeyVault, type KeyVault } from './bot-key-vault.js';
import { BotLeasing } from './bot-leases.js';
import { fileBotStorage, sharedBotStorage } from './bot-storage.js';
import { embeddedIdentity } from './embedded-identity.js';
import { pgTraceArchive } from './pg-traces.js';
import { userChanges } from './user-changes.js';
import { botKeysDir } from '../util/data-dir.js';

/** What a BotHost inside a server is given: the embedded server, where bots keep what they keep, and (on a database) their placement. */
export interface EmbeddedHostDeps {
  embedded: { url: string; identity: IdentityProvider; changes?: ChangeFeed };
  storage: BotStorage;
  placement?: BotPlacement;
}

/** How a process on a shared database takes part in placing the bots (docs/scaling.md). */
export interface LeaseSettings {
  log: Logger;
  /** How long a silent process keeps its bots (`bots.lease_ttl`). */
  ttlMs: number;
}

/**
 * The deployment of a server's bots, decided once, here. On the file store (no `postgres`) this
 * process owns every bot: their keys are files under `stateDir/keys`, their state is in the
 * server's store (a file store of their own for remote bots), their traces are files. On
 * PostgreSQL shared by several processes (`postgres`): bots are shared out by leases
 * (`lease`), their keys are kept in the store (`bot_keys`), their state in the shared store fenced
 * by the lease, their traces in `<schema>.bot_traces`, so a bot keeps all of it whichever
 * process runs it, and hears of pushes other processes queue for it.
 *
 * @example new BotHost({ ...embeddedHostDeps({ store, env, url, stateDir, postgres: ctx.postgres, lease }), registry, log, clock, scheduler, stateDir, dir })
 */
export function embeddedHostDeps(o: { store: Store; env: DomainEnv; url: string; stateDir: string; postgres?: { pool: pg.Pool; schema: string }; lease?: LeaseSettings }): EmbeddedHostDeps {
  const deployment: Deployment = o.postgres ? sharedDeployment(o.store, o.postgres, o.lease) : { storage: fileBotStorage({ embedded: o.store, stateDir: o.stateDir }) };
  return {
    embedded: {
      url: o.url,
      identity: embeddedIdentity({ store: o.store, env: o.env, keysDir: botKeysDir(o.stateDir), vault: deployment.vault }),
      changes: userChanges(o.store),
    },
    storage: deployment.storage,
    placement: deployment.placement,
  };
}

/** What differs between the deployments. Internal. */
interface Deployment {
  storage: BotStorage;
  placement?: BotPlacement;
  vault?: KeyVault;
}

/** Several processes on one database: leases place the bots; keys, state and traces live in it. Internal. */
function sharedDeployment(store: Store, db: { pool: pg.Pool; schema: string }, lease: LeaseSettings | undefined): Deployment {
  if (!lease) throw new Error('bots on a shared database need lease settings (log, ttl)');
  // process liveness is wall time, whatever the bots' clock (docs/scaling.md)
  const placement = new BotLeasing({ store, clock: systemClock, log: lease.log, ttlMs: lease.ttlMs, label: `${hostname()}:${process.pid}` });
  return { placement, vault: storeKeyVault(store), storage: sharedBotStorage({ store, placement, archive: (bot) => pgTraceArchive(db.pool, db.schema, bot) }) };
}
