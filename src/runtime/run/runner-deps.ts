import type { Logger } from 'pino';
import type { Client } from '../../client/client.js';
import type { UnauthorizedError } from '../../client/errors.js';
import type { UserRef } from '../../client/types.js';
import type { Clock } from '../../clock/clock.js';
import type { CompiledBot, CompiledRule } from '../define/bot.js';
import type { BotState, InboxEntry, RunWrite } from '../state/bot-state.js';
import type { TraceLog } from '../state/traces.js';
import type { DialogState } from '../state/dialog-state.js';
import type { DialogTimers } from './dialog-timers.js';
import type { LoopGuard } from './loop-guard.js';
import type { Restarts } from './run-control.js';

/** Who the bot is: its file, its user and client, and what it knows of the people it meets. */
export interface RunnerSelf {
  bot: CompiledBot;
  me: UserRef;
  api: Client;
  isContact(pin: string): Promise<boolean>;
  /** Whether a user is one that bots act as (for `ignore_bots`). */
  isBot?(userId: string): boolean;
}

/** Where its runs are written: its state, traces and log; a dry run only logs its API effects. */
export interface RunnerWrites {
  state: BotState;
  traces: TraceLog;
  log: Logger;
  dryRun: boolean;
}

/** Its time and limits: the clock, the signal of its stop, a step's working time, retry waits. */
export interface RunnerLimits {
  clock: Clock;
  signal: AbortSignal;
  /** Working time an action, the conditions of a rule, may take (`runtime.step_timeout`). */
  stepTimeoutMs: number;
  /** First wait after a transient failure (doubles to `retryCapMs`). */
  retryBaseMs?: number;
  retryCapMs?: number;
}

/**
 * What a RuleRunner is given by the bot runner, in three parts (a function takes only the parts
 * it uses), and two calls back to the bot runner.
 */
export interface RunnerDeps {
  self: RunnerSelf;
  writes: RunnerWrites;
  limits: RunnerLimits;
  /** The key was refused: the bot must stop. */
  onUnauthorized(err: UnauthorizedError): void;
  /** Hands an inbox entry to the runner again (a dialog's answer or timer woke its run). */
  wake?(entryId: string): void;
}

/** What every run of one RuleRunner shares: its deps, the loop guard, who runs, and its clock holds. */
export interface RunnerContext extends RunnerDeps {
  guard: LoopGuard;
  /** Per rule: runs that decided to run and have not ended (mode single skips while one goes). */
  running: Map<string, number>;
  /** Mode restart: the run of each rule that is going. */
  restarts: Restarts;
  /** +1 when work starts taking steps, -1 when it ends or parks (the clock hold of a run). */
  busy(delta: number): void;
  /** The bot's dialogs (`ask`), and the timers of those that wait. */
  dialogs: DialogState;
  timers: DialogTimers;
}

/** One rule's run for one inbox entry. `shared.remaining`: the entry's runs not ended yet. */
export interface RuleRun {
  runner: RunnerContext;
  rule: CompiledRule;
  entry: InboxEntry;
  shared: { remaining: number };
  /** Messages a dialog of this run did not read, queued again: handed over when the run ends. */
  requeued?: string[];
}

/**
 * Changes of a run not written yet: they go with its next write (a step's write-ahead, or the
 * run's last write), so an event with one API step costs two writes of the bot's state.
 */
export interface Pending {
  lastRun?: RunWrite['lastRun'];
  throttled?: RunWrite['throttled'];
  vars?: Record<string, unknown>;
  /** Cents to add to today's spend (negative gives back a refused transfer). */
  spend: number;
}
