import type { Logger } from 'pino';
import type { ClientOptions } from '../../client/client.js';
import type { Transport } from '../../client/transport.js';
import type { Clock } from '../../clock/clock.js';
import type { Scheduler } from '../../clock/scheduler.js';
import type { FileProblem } from '../../util/yaml-errors.js';
import type { BotRunner } from '../bot/bot-runner.js';
import type { Registry } from '../contract/registry.js';
import type { CompiledBot } from '../define/bot.js';
import type { BotPlacement, BotStorage, ChangeFeed, IdentityProvider } from '../ports.js';
import type { Trace, TraceLog } from '../state/traces.js';

/** What a BotHost is given. */
export interface HostOptions {
  registry: Registry;
  log: Logger;
  clock: Clock;
  scheduler: Scheduler;
  /** The bots folder (every *.yaml / *.yml), or explicit files. */
  dir?: string;
  files?: string[];
  /**
   * The server this process serves: bots with `server: embedded` and `as:` use it. With
   * `changes`, its bots are woken by the changes that concern them; with `transport`, their
   * requests go to it in process (no socket), with the same answers as over HTTP.
   */
  embedded?: {
    url: string;
    identity: IdentityProvider;
    changes?: ChangeFeed;
    transport?: Transport;
  };
  /** Where each bot keeps its state, its traces, and hears of pushes queued elsewhere (one question per bot). */
  storage: BotStorage;
  /** Every bot talks to this base URL (`pinbot bots run --server URL`). */
  server?: string;
  dryRun?: boolean;
  env?: NodeJS.ProcessEnv;
  /** Variables bot files may read anywhere (config `bots.env_allow`); by default only in key/server. */
  envAllow?: readonly string[];
  /** Remote servers bot files may name (config `bots.allowed_servers`); `server` is added to them. */
  allowedServers?: readonly string[];
  /** Client settings (tests make retries fast). */
  client?: Partial<ClientOptions>;
  jitter?: boolean;
  retryBaseMs?: number;
  /** Working time an action, a rule's conditions or a poll source may take (`runtime.step_timeout`). */
  stepTimeoutMs?: number;
  /**
   * Woken bots (embedded) still poll their sources this often, as a safety net
   * (`runtime.safety_poll`, default 10 minutes).
   */
  safetyPollMs?: number;
  /**
   * Shares the bots out with other processes on the same database (driver postgres): this host
   * runs only the bots whose lease it holds, and every write of their state is fenced by it.
   */
  placement?: BotPlacement;
  /** Told of every trace as a bot records it (the web console's live timeline). */
  onTrace?: (trace: Trace) => void;
}

/** One bot file as the host sees it. */
export interface BotStatus {
  name?: string;
  file: string;
  /** `elsewhere`: another process on the database runs it (its lease is theirs). */
  status: 'running' | 'starting' | 'waiting' | 'failed' | 'stopped' | 'invalid' | 'disabled' | 'elsewhere' | 'paused';
  message?: string;
  version?: string;
  dry_run?: boolean;
  problems?: string[];
  /** ISO time of the last finished poll. */
  last_poll?: string;
  /** ISO time (bot clock) of the last rule run (traced). */
  last_run?: string;
  /** What is worth fixing in a valid file (file:line:col: …). */
  warnings?: string[];
}

/** One bot file of a host: its text, its compiled bot (if valid), its runner and traces. */
export interface Slot {
  file: string;
  text: string;
  /** The bot's name, when the file got that far. */
  name?: string;
  bot?: CompiledBot;
  problems: FileProblem[];
  warnings?: FileProblem[];
  runner?: BotRunner;
  traces?: TraceLog;
  /** Paused by the operator (`pause`): not run until `resume` or a change of its file. */
  paused?: boolean;
}
