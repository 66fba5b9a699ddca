import type { Logger } from 'pino';
import type { Client } from '../../client/client.js';
import type { RequestKind } from '../../client/rate-budget.js';
import type { UserRef } from '../../client/types.js';
import type { Clock } from '../../clock/clock.js';
import type { Scheduler } from '../../clock/scheduler.js';
import type { Store } from '../../store/core/types.js';
import { isTraceReason, type StepFailureReason } from './trace-reasons.js';

import type { JsonSchema } from '../../util/json-schema.js';

export type { JsonSchema };

/**
 * An event of one bot: a stable `key` (the same event always has the same key, across polls
 * and restarts), its trigger type and its data (what templates see as `event`).
 */
export interface BotEvent {
  key: string;
  type: string;
  /** When the bot saw it (clock ms). */
  at: number;
  /**
   * Server time of the item (ms: a message's timestamp, a transfer's created_at …). Events found
   * together are handled in this order, across sources and conversations.
   */
  ts?: number;
  payload: Record<string, unknown>;
  /** Only this rule may run for it (schedule events belong to their rule). */
  rule?: string;
}

/** What a static check reports: the path inside the checked value, and a message. */
export interface CheckProblem {
  path: Array<string | number>;
  message: string;
  hint?: string;
  /** Point at the key of `path` rather than its value (an unknown key). */
  onKey?: boolean;
  /** Worth saying, but the file is valid: the bot runs. */
  warning?: boolean;
  /** Point at this text inside the value at `path` (a Liquid tag, an `${env:…}` reference). */
  find?: string;
}

/** What a poll source gets each time it runs. */
export interface SourceContext {
  api: Client;
  me: UserRef;
  signal: AbortSignal;
  log: Logger;
  clock: Clock;
  /**
   * With an `undefined` cursor (the first poll): when the bot started needing this source (clock
   * ms). What happened after it is not history: it is returned as events.
   */
  baseline?: number;
  /**
   * The kind of request to make (`api.…({ kind })`): `poll` on the bot's cadence (paced over the
   * rate-limit window), `woken` when a change that concerns the bot woke it (not spread out: it
   * is answering something).
   */
  requestKind?: RequestKind;
  /** The bot polling, and the store its state lives in (plugin sources keep their state there). */
  bot?: string;
  store?: Store;
}

/**
 * A poll source: reads the API from its cursor and returns new events and the next cursor.
 * A `undefined` cursor is the first poll ever: take a baseline (history is not replayed), but
 * do return items that still wait for an answer (pending transfers, requests).
 */
/**
 * What a change of the embedded server can concern, as its commit feed tells a bot's user
 * (`deployment/user-changes.ts` maps the domain's writes to these; a check there keeps the two
 * lists the same). A source names the topics it looks for.
 */
export const TOPICS = ['messages', 'wallet', 'introductions', 'contacts'] as const;
export type Topic = (typeof TOPICS)[number];

export interface SourceDef {
  name: string;
  description: string;
  /**
   * What changes this source looks for (`messages`, `wallet`, `introductions`, `contacts`). On
   * the embedded server a bot polls a source as soon as a change of one of its topics concerns
   * the bot's user; a source without topics is polled on any such change.
   */
  topics?: readonly Topic[];
  /**
   * It reads something outside pinbot (a file, an HTTP feed): no commit of pinbot's tells when
   * it changed, so its cadence timer is an ordinary timer — a virtual clock fires it at every
   * `poll` interval, as a real one does — not a heartbeat that waits for a change.
   */
  outside?: boolean;
  /**
   * Its first poll reads from `ctx.baseline` (what came after the bot's start), so on the
   * embedded server it may wait until a change wakes it. Sources whose first poll must come at
   * once (items pending at the start, a balance to compare with) leave it out.
   */
  readsFromBaseline?: boolean;
  /** `more`: it stopped with more to read (a budget per poll): polled again once this is delivered. */
  poll(
    ctx: SourceContext,
    cursor: unknown,
  ): Promise<{ events: Array<Omit<BotEvent, 'at'>>; cursor: unknown; more?: boolean }>;
}

/** The thing accept/decline act on. */
export type Subject = 'transfer' | 'introduction' | 'contact_request';

/** Where a `reply` goes for an event. */
export type ReplyTarget = { conversation_id: string } | { pin: string };

/** What a trigger's setup can use (schedule registers cron jobs). */
export interface TriggerSetupContext {
  bot: string;
  ruleId: string;
  scheduler: Scheduler;
  clock: Clock;
  /**
   * Queues an event for this bot (persisted before it returns). `fired`: the trigger's due time,
   * saved with the event (what a restart looks back to for missed fires).
   */
  emit(event: Omit<BotEvent, 'at'>, opts?: { fired?: number }): Promise<void>;
  /**
   * Queues an event pushed from outside (a plugin's push source): exactly once per `key` —
   * the key is remembered with the source's cursor in the same write, so a redelivery is
   * dropped even after the first one was handled. Resolves false for a duplicate.
   */
  push(event: Omit<BotEvent, 'at'>): Promise<boolean>;
  log: Logger;
  /** When this rule's trigger last fired (or the bot first started): what it may have missed since. */
  lastFired?: number;
}

/**
 * A trigger: the `on:` of a rule. Polled triggers name their `source`; others set themselves up
 * per rule (`setup`). `example` is a sample `event` (docs, and the fields conditions may name).
 */
export interface TriggerDef {
  name: string;
  description: string;
  /** Schema of the options in the `{ name: options }` form; without it only the bare name is allowed. */
  options?: JsonSchema;
  /** The options form is required (e.g. schedule needs its cron expression). */
  optionsRequired?: boolean;
  source?: string;
  subject?: Subject;
  example: Record<string, unknown>;
  /**
   * `example` lists every field this trigger's events have, so a template reading another
   * `event` field is refused when the bot file is checked (the built-in triggers say so).
   */
  completeExample?: boolean;
  /** The user who caused the event (for `from:`). */
  actor?(event: Record<string, unknown>, me: UserRef): UserRef | undefined;
  /** Where `reply` goes; undefined: the event has no one to reply to. */
  replyTo?(event: Record<string, unknown>, me: UserRef): ReplyTarget | undefined;
  /** Static checks of the options beyond the schema. */
  check?(options: unknown): CheckProblem[];
  setup?(ctx: TriggerSetupContext, options: unknown): (() => void) | void;
}

/** One condition's outcome, as traces show it. */
export interface ConditionResult {
  ok: boolean;
  /** What was tested, e.g. `amount max 50`. */
  label: string;
  /** What was found, e.g. `75 > 50`. */
  detail?: string;
  children?: ConditionResult[];
}

/** What templates and conditions see. */
export interface RunScope {
  event: Record<string, unknown>;
  bot: { name: string };
  me: UserRef;
  vars: Record<string, unknown>;
  /** Results of the earlier steps of this run, by index. */
  steps: unknown[];
  now: string;
  /** `GET /wallet/balance`, fetched on first use. */
  readonly wallet: Promise<unknown>;
  /** Named groups of the `matches:` conditions that held (`order (?<item>\w+)` → match.item). */
  match?: Record<string, string>;
  /** Answers of the run's `ask` steps so far (`save: size` → answers.size). */
  answers?: Record<string, unknown>;
  /** In `on_error` steps: the step that failed. */
  error?: { step: number; action: string; message: string; code?: string };
  /** The live memory of the person the event is about (read fresh: a `remember` of this run is seen). */
  readonly memory?: Record<string, unknown>;
  /** The live memory of the event's conversation. */
  readonly conversation_memory?: Record<string, unknown>;
}

/** What a condition gets when it runs. */
export interface ConditionRunContext {
  scope: RunScope;
  api: Client;
  trigger: TriggerDef;
  /** Aborts when the rule's conditions run out of time (`runtime.step_timeout`) or the bot stops. */
  signal?: AbortSignal;
  /** The store of the bot's state (plugin conditions read their state there). */
  store?: Store;
  log?: Logger;
  clock?: Clock;
  /** Whether `pin` is a contact of the bot (cached for a poll interval). */
  isContact(pin: string): Promise<boolean>;
}

export type ConditionFn = (ctx: ConditionRunContext) => Promise<ConditionResult>;

/** Lets a condition compile its nested conditions (all / any / not). */
export interface ConditionCompiler {
  compile(spec: unknown): ConditionFn;
}

/** What a condition's static check knows: the rule's triggers. */
interface ConditionCheckContext {
  triggers: TriggerDef[];
  check(spec: unknown, path: Array<string | number>): CheckProblem[];
}

/**
 * A condition: a key of an `if:` mapping (`from`, `all`, `liquid`, `karma.min` …). Keys that are
 * not registered conditions are event fields with a matcher.
 */
export interface ConditionDef {
  name: string;
  description: string;
  schema: JsonSchema;
  /** A sample value (docs). */
  example: unknown;
  check?(value: unknown, ctx: ConditionCheckContext): CheckProblem[];
  compile(value: unknown, compiler: ConditionCompiler): ConditionFn;
}

/**
 * What an error may say about itself for traces: its reason (a plugin's failure is
 * `plugin_failed` or `plugin_timeout`), and the plugin and first frame of its own code.
 */
export interface TraceInfo {
  traceReason: StepFailureReason;
  plugin?: string;
  frame?: string;
}

/** The TraceInfo an error carries, if any. */
export function traceInfo(err: unknown): TraceInfo | undefined {
  const r = (err as Partial<TraceInfo> | null)?.traceReason;
  return isTraceReason(r) ? (err as TraceInfo) : undefined;
}

/** Thrown by actions when a guardrail refuses (per-transfer cap, daily cap, allow-list). */
export class LimitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LimitError';
  }
}

/** What an action gets when it runs. */
export interface ActionRunContext {
  api: Client;
  scope: RunScope;
  trigger: TriggerDef;
  /** Idempotency-Key of this step: the same for every retry and after a restart. */
  idempotencyKey: string;
  signal: AbortSignal;
  log: Logger;
  clock: Clock;
  /** Waits on the bot's clock (virtual clocks included); `until` is clock ms. */
  sleepUntil(until: number): Promise<void>;
  /** Persists changes to the bot's variables (in the same write as this step's result). */
  setVars(patch: Record<string, unknown>): void;
  /** Checks the money guardrails for a transfer of `cents` to `pin`; throws LimitError. */
  checkSpend(pin: string, cents: number): void;
  /** Notes a transfer of `cents` against the daily cap (written with the step's start). */
  reserveSpend(cents: number): void;
  /** The bot and rule running this step. */
  bot: string;
  rule: string;
  /** The store of the bot's state (plugins keep their per-bot state there, see runtime/state/bot-state.ts). */
  store: Store;
  scheduler?: Scheduler;
  /** The memory of the event's person and conversation (`remember`, `forget`, a plugin's `ctx.memory`). */
  memory?: StepMemory;
  /** A plugin action's questions and recorded effects (run/dialog-replay.ts): `ctx.ask`, `ctx.once`. */
  dialog?: StepDialog;
}

/** What a plugin's `ctx.ask` asks: the keys of the YAML `ask` step (`timeout`: a duration or ms). */
export interface AskRequest {
  question: string;
  expect?: unknown;
  retry?: string;
  attempts?: number;
  timeout?: string | number;
}

/**
 * The questions and effects of one plugin step, by position: a run replayed after an answer
 * gets the recorded answers and results instead of asking or acting again (run/dialog-replay.ts).
 */
export interface StepDialog {
  /** A call of the action starts, with these arguments: its calls count from the first again. */
  begin(args: unknown): void;
  /** The answer recorded at this position, or a suspension of the run until it comes. */
  ask(req: AskRequest): Promise<{ value: unknown; groups?: Record<string, string> }>;
  /** The result recorded at this position under `name`, or `fn`'s (recorded). */
  effect<T>(name: string, fn: () => Promise<T>): Promise<T>;
}

/** Whose memory: the event's person or its conversation. */
export type MemoryWhose = 'person' | 'conversation';

/** A change of memory: keys to set (JSON values), keys to remove (`all`: every key). */
export interface MemoryEdit {
  in: MemoryWhose;
  set?: Record<string, unknown>;
  forget?: readonly string[] | 'all';
}

/** The memory a step may read and write (runtime/state/memory.ts keeps it). */
export interface StepMemory {
  /** The PIN of the event's person, if it has one. */
  person?: string;
  /** The event's conversation, if it has one. */
  conversation?: string;
  /** Live entries (a copy). */
  read(whose: MemoryWhose): Record<string, unknown>;
  /**
   * Applies edits in one durable write (all or nothing; a bound passed throws a LimitError). An
   * edit under a `mark` already applied (the same step run again after a crash) is skipped.
   */
  apply(edits: readonly MemoryEdit[], mark?: string): Promise<void>;
}

/**
 * An action: a step of a rule's `do:` list. `effect: 'api'` actions change the server: dry-run
 * logs them instead, and each carries an Idempotency-Key; `local` ones (log, set, wait) run.
 */
export interface ActionDef {
  name: string;
  description: string;
  schema: JsonSchema;
  example: unknown;
  /** May be written as a bare string (`- accept`). */
  bare?: boolean;
  effect: 'api' | 'local';
  /** A local action whose prepared args are persisted before it runs (wait: its deadline). */
  durable?: boolean;
  /** What the event must offer: a subject to accept/decline, or someone to reply to. */
  needs?: 'subject' | 'reply';
  /** Whose memory a step with these arguments writes: the event must have that person or conversation. */
  needsMemory?(args: unknown): MemoryWhose | undefined;
  /** Strings are templates (default true). */
  templated?: boolean;
  /** The plugin that registered it (a timeout of its step is traced as `plugin_timeout`). */
  plugin?: string;
  /** Before the write-ahead: turns rendered args into what `run` takes (validate, coerce). */
  prepare?(args: unknown, ctx: ActionRunContext): unknown;
  run(args: unknown, ctx: ActionRunContext): Promise<unknown>;
  check?(args: unknown): CheckProblem[];
}
