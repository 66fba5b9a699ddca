import type { ActionDef, ConditionFn, TriggerDef } from '../contract/types.js';
import type { MemoryOptions } from '../contract/memory-subjects.js';

/** `loop_guard:` of a bot file, in ms. */
export interface LoopGuardOptions {
  /** Machine-speed replies in a row the bot still answers; the next one pauses the exchange. */
  maxReplies: number;
  /** A reply that comes this soon after the bot's answer (server time) is machine speed. */
  replyWithinMs: number;
  pauseMs: number;
}

/**
 * On unless a bot says `loop_guard: false`: more than 5 replies in a row within 2 s of the
 * bot's answers pause that exchange for 10 minutes. */
export const DEFAULT_LOOP_GUARD: LoopGuardOptions = { maxReplies: 5, replyWithinMs: 2_000, pauseMs: 600_000 };

/** What a cooldown or throttle counts runs by: the rule, who caused the event, or its conversation. */
export type LimitScope = 'rule' | 'sender' | 'conversation';

/** `throttle:` of a rule, compiled. */
export interface Throttle {
  maxRuns: number;
  withinMs: number;
  per: LimitScope;
}

/** A bot file as written (after `${env:VAR}` and schema validation). */
export interface BotSpec {
  name: string;
  description?: string;
  as?: string;
  create_user?: boolean;
  key?: string;
  server?: string;
  poll?: string;
  enabled?: boolean;
  dry_run?: boolean;
  limits?: { max_per_transfer?: number; max_per_day?: number; send_to?: string[] };
  traces?: number;
  vars?: Record<string, unknown>;
  memory?: {
    ttl?: string;
    max_keys?: number;
    max_bytes?: number;
    max_keys_per_person?: number;
    max_bytes_per_person?: number;
  };
  loop_guard?: false | { max_replies?: number; reply_within?: string; pause?: string };
  ignore_bots?: boolean;
  per_sender?: { max_queued?: number };
  rules: RuleSpec[];
}

export interface RuleSpec {
  id?: string;
  description?: string;
  on: unknown;
  if?: unknown;
  do: unknown[];
  mode?: 'queued' | 'single' | 'parallel' | 'restart';
  cooldown?: string | { for: string; per?: LimitScope };
  throttle?: { max_runs: number; within: string; per?: LimitScope };
  on_error?: unknown[];
  /** Dialogs (`ask`): steps when no answer came in time, when a cancel word ended it; the words. */
  on_timeout?: unknown[];
  on_cancel?: unknown[];
  cancel_words?: string[];
  enabled?: boolean;
}

export interface CompiledTrigger {
  def: TriggerDef;
  options: unknown;
}

export interface CompiledStep {
  index: number;
  /** Hash of the step as written: a reload that changes a step gives it a new identity. */
  sig: string;
  action: ActionDef;
  /** As written: strings are templates. */
  args: unknown;
  continueOnError: boolean;
  /** Runs only when the `choose` step at `step` took branch `arm` (every guard must hold). */
  guard?: Array<{ step: number; arm: number }>;
  /** A `choose` step: its branches, in order (`else` has no condition). */
  branches?: Array<{ label: string; condition?: ConditionFn }>;
  /** One of the rule's `on_error` steps: taken only after a step failed. */
  onError?: boolean;
  /** One of the rule's `on_timeout` / `on_cancel` steps: taken only when a dialog ended so. */
  onTimeout?: boolean;
  onCancel?: boolean;
}

export interface CompiledRule {
  id: string;
  index: number;
  description?: string;
  triggers: CompiledTrigger[];
  condition?: ConditionFn;
  steps: CompiledStep[];
  mode: 'queued' | 'single' | 'parallel' | 'restart';
  cooldownMs: number;
  /** What the cooldown counts by (default the rule). */
  cooldownPer: LimitScope;
  /** At most `maxRuns` runs within `withinMs`, by `per`. */
  throttle?: Throttle;
  enabled: boolean;
  /** A step of the rule is an `ask` (the rule holds dialogs). */
  asks?: boolean;
  /** Answers that end its dialogs (`on_cancel`); default [cancel]. */
  cancelWords?: string[];
}

/** Money guardrails in cents. */
export interface Limits {
  maxPerTransfer?: number;
  maxPerDay?: number;
  sendTo?: Set<string>;
}

/** A validated bot, ready to run. */
export interface CompiledBot {
  name: string;
  file: string;
  /** Hash of the file text: a changed file is a new version. */
  version: string;
  spec: BotSpec;
  identity: { as: string; createUser: boolean } | { key: string };
  /** `embedded`, or a base URL. */
  server: string;
  pollMs: number;
  enabled: boolean;
  dryRun: boolean;
  limits: Limits;
  traceLimit: number;
  /** `false`: off; undefined: the defaults. */
  loopGuard?: LoopGuardOptions | false;
  /** Events caused by users that bots act as are not run (traced `from_bot`). */
  ignoreBots: boolean;
  /** Bounds per sender: runs of a queued rule waiting at once. */
  perSender?: { maxQueued?: number };
  /** The bounds and age of its memory of people and conversations. */
  memory: MemoryOptions;
  rules: CompiledRule[];
  /** Poll sources the enabled rules need. */
  sources: string[];
}
