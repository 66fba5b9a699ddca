import type { Logger } from 'pino';
import type { Store } from '../../store/core/types.js';
import type { Clock } from '../../clock/clock.js';
import type { Scheduler } from '../../clock/scheduler.js';
import type { Registry } from '../contract/registry.js';
import type { CompiledBot } from '../define/bot.js';
import type { ChangeFeed, InboxFeed } from '../ports.js';
import type { TraceLog } from '../state/traces.js';
import type { BotIdentity } from './identity.js';

/** `runtime.step_timeout` when nothing says otherwise. */
export const DEFAULT_STEP_TIMEOUT_MS = 10_000;

export type RunnerStatus = 'starting' | 'waiting' | 'running' | 'failed' | 'stopped';

export interface RunnerOptions {
  bot: CompiledBot;
  registry: Registry;
  /** Who the bot is (its client and user), and which users are bots: BotIdentities.of. */
  identity: BotIdentity;
  /** The store of the bot's state (opened once the identity is known). */
  openStore(): Promise<Store>;
  /** That store is ordered with the server's commits (BotStore.ordered). */
  orderedStore?: boolean;
  traces: TraceLog;
  log: Logger;
  clock: Clock;
  scheduler: Scheduler;
  dryRun: boolean;
  /** Working time an action, a rule's conditions or a poll source may take (default 10 s). */
  stepTimeoutMs?: number;
  /** Spread the second poll over the interval (many bots do not poll in step). */
  jitter?: boolean;
  /** Changes of the embedded server by user: the bot polls at once when one concerns it. */
  changes?: ChangeFeed;
  /** With `changes`: how often woken sources are polled anyway (default 10 minutes). */
  safetyPollMs?: number;
  /** Entries waiting to be handled above which polling pauses. */
  maxBacklog?: number;
  retryBaseMs?: number;
  /**
   * The first polls are spread over at most this (default: the bot's `poll`). A bot taken over
   * from another process may have missed events since: the host polls it sooner.
   */
  firstSpreadMs?: number;
  /** Entries queued in the bot's inbox by other processes (pushes received there): handled here. */
  inbox?: InboxFeed;
}
