import type { Logger } from 'pino';
import type { Client } from '../client/client.js';
import type { UserRef } from '../client/types.js';
import type { Expect } from '../runtime/index.js';

import type { Infer } from './schema-types.js';

export type { Infer, Schema, SchemaObject, SchemaType } from './schema-types.js';

/** A JSON value (what state, results and event payloads may hold). */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/**
 * Persistent key-value state of a plugin: per plugin and per bot in action, condition and poll
 * contexts; per plugin in setup. Kept in the store (journaled and fsync'd like everything
 * else), so it survives restarts. Values are JSON (at most 256 KB each).
 *
 * @example
 * const n = await ctx.state.update<number>('ABC123', (n = 0) => n + 1);
 */
export interface PluginState {
  get<T = unknown>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown): Promise<void>;
  /**
   * Reads, changes and writes one key in one transaction (`fn` is synchronous and pure). Inside
   * an action, a step run again after a crash does not apply its update twice.
   */
  update<T = unknown>(key: string, fn: (current: T | undefined) => T): Promise<T>;
  delete(key: string): Promise<boolean>;
  /** Every key (with a prefix, only those), in key order. */
  entries(prefix?: string): Promise<Array<[key: string, value: unknown]>>;
}

/**
 * What a bot remembers of one person (or one conversation): the memory its YAML rules read as
 * `memory.KEY` (`conversation_memory.KEY`) and write with `remember`. Bounded by the bot's
 * `memory:` options (a write past a bound throws, nothing written; the step fails with reason
 * `limit`) and aged out by its `memory.ttl`.
 *
 * @example
 * const visits = ((await ctx.memory.get<number>('visits')) ?? 0) + 1;
 * await ctx.memory.set('visits', visits);
 */
export interface Memory {
  /** Whose: the person's PIN (or the conversation's id); undefined when the event has none — every call then throws. */
  readonly subject: string | undefined;
  get<T = Json>(key: string): Promise<T | undefined>;
  /**
   * Keys are names (letters, digits, _); values JSON. Inside a step, a write is applied once
   * even if the step runs again. */
  set(key: string, value: Json): Promise<void>;
  delete(key: string): Promise<boolean>;
  /** Every live key and value. */
  entries(): Promise<Record<string, Json>>;
}

/** Options of `schedule`. */
export interface ScheduleOptions {
  /** Calling `schedule` again with the same name replaces the job (default: the cron text). */
  name?: string;
  /** IANA time zone of the expression (default UTC). */
  timezone?: string;
}

/** What every plugin call gets. */
export interface BaseContext<C> {
  /** The plugin's name. */
  readonly plugin: string;
  /** The plugin's settings (`plugins.config.<name>` in config.yaml), validated, defaults filled in. */
  readonly config: C;
  /** A pino logger carrying plugin (and bot and rule where there is one). */
  readonly log: Logger;
  /** Aborts when the call runs out of time (`runtime.step_timeout`) or pinbot stops. */
  readonly signal: AbortSignal;
  /** The time of the shared clock, in ms (virtual in tests and `serve --virtual-clock`). */
  now(): number;
  /** Waits on the shared clock; the wait does not count against the call's timeout. */
  sleep(ms: number): Promise<void>;
  /**
   * Runs `fn` at the times of a cron expression on the shared clock, under the same timeout and
   * error boundary as every plugin call, until the plugin stops. Returns a cancel function.
   */
  schedule(cron: string, fn: (at: Date) => unknown, opts?: ScheduleOptions): () => void;
}

/** What a call made for one bot gets (actions, conditions, poll sources). */
export interface BotContext<C> extends BaseContext<C> {
  /** The bot's name. */
  readonly bot: string;
  /** The typed API client acting as the bot's user (the bot's own client and rate budget). */
  readonly api: Client;
  /** The bot's user. */
  readonly me: UserRef;
  /** This plugin's state for this bot. */
  readonly state: PluginState;
}

/** The event a rule runs for, as templates see it. */
export type EventData = Record<string, unknown> & { type: string; event_id: string };

/** What an action gets. */
export interface ActionContext<C> extends BotContext<C> {
  readonly event: EventData;
  readonly rule: string;
  /** The bot's variables (`vars.NAME`). */
  readonly vars: Record<string, unknown>;
  /**
   * What the `ask` steps of this run saved before this step (`save: size` → `answers.size`; the
   * named groups of a `matches:` expect too): a plugin action after the questions reads them.
   */
  readonly answers: Readonly<Record<string, unknown>>;
  /** The Idempotency-Key of this step: the same on every retry and after a restart. */
  readonly idempotencyKey: string;
  /**
   * Sends a message back, where the built-in `reply` would (the event's conversation, or whoever
   * caused it), with an Idempotency-Key derived from this step's.
   */
  reply(text: string): Promise<unknown>;
  /** Sends a message to a PIN, with an Idempotency-Key derived from this step's. */
  send(pin: string, text: string): Promise<unknown>;
  /** What the bot remembers of the person the event is about (its rules' `memory.KEY`). */
  readonly memory: Memory;
  /** What the bot remembers of the event's conversation (its rules' `conversation_memory.KEY`). */
  readonly conversationMemory: Memory;
  /**
   * Asks the person who caused the event, where `reply` would, and resolves with their next
   * message in that conversation, read as `expect` says (re-asked with `retry` up to
   * `attempts`). While it waits nothing runs: the run is parked in the store, and when the
   * answer comes the action runs again **from its start** — earlier `ask`s give their recorded
   * answers, and `reply`, `send` and `once` their recorded results without acting again. So
   * the action must make the same calls in the same order each time (docs/plugins.md
   * "Asking"). Rejects with a DialogEnded on a timeout, a cancel word, or no valid answer.
   *
   * @example const size = await ctx.ask({ question: 'Size?', expect: { choice: ['small',
   * 'large'] }, timeout: '10m' }); // 'small' | 'large'
   */
  ask<const E extends AskExpect = 'text'>(options: AskOptions<E>): Promise<Answer<E>>;
  /**
   * Runs `fn` once for this step and position: when the action runs again after an answer, the
   * result recorded then (JSON) is given back and `fn` does not run. For effects and reads that
   * must not repeat or change across the runs of an action that asks (a payment, a lookup).
   */
  once<T>(name: string, fn: () => T | Promise<T>): Promise<T>;
}

/** What `ctx.ask` may expect of an answer: the `expect:` kinds of a bot's `ask` step (one type). */
export type AskExpect = Expect;

/**
 * What `ctx.ask` gives for an `expect`: text (`text`, `pin`: upper-cased), a number, a boolean
 * (`yes_no`), the choice as written in the list (one of its literal types), or the named
 * groups of a `matches` pattern.
 */
export type Answer<E> = E extends 'number' | { number: unknown }
  ? number
  : E extends 'yes_no'
    ? boolean
    : E extends { choice: readonly (infer C)[] }
      ? C
      : E extends { matches: string }
        ? Record<string, string>
        : string;

/** What `ctx.ask` takes: the keys of a bot's `ask` step (docs/plugins.md "Asking"). */
export interface AskOptions<E extends AskExpect> {
  /** Sent where `reply` would (the event's conversation, or whoever caused it). */
  question: string;
  /** What the answer must be (default `text`). */
  expect?: E;
  /** Sent after an invalid answer (default: the question again). */
  retry?: string;
  /** Answers tried (default 3, at most 20); then DialogEnded `invalid_answer`. */
  attempts?: number;
  /** How long the answer is waited for: a duration (`'10m'`) or ms (default `'1h'`); then DialogEnded `timeout`. */
  timeout?: string | number;
}

/** What a condition gets. */
export interface ConditionContext<C> extends BotContext<C> {
  readonly event: EventData;
  readonly vars: Record<string, unknown>;
}

/** An event a poll source found, or a push source emits. */
export interface SourceEvent {
  /** Stable id: the same item always has the same key (duplicates are dropped). */
  key: string;
  /** What templates see as `event` (plus `type` and `event_id`). */
  payload: Record<string, unknown>;
}

/** What a poll source gets each poll. */
export type PollContext<C> = BotContext<C>;

/** An event a push source emits. */
export interface PushEvent {
  /** Only this bot (default: every bot with a rule on the trigger). */
  bot?: string;
  /** Stable id (a redelivery with the same key is dropped); default: a new random key. */
  key?: string;
  payload: Record<string, unknown>;
}

/** An inbound HTTP request to a plugin's route. */
export interface RouteRequest {
  method: string;
  /** The path below `/plugins/<name>`, e.g. `/tip-jar`. */
  path: string;
  /** `:name` parts of the route's path. */
  params: Record<string, string>;
  query: Record<string, string>;
  /** Header names are lower-case. */
  headers: Record<string, string | undefined>;
  /** The raw body (at most `plugins.max_body_bytes`, default 1 MB). */
  body: Buffer;
  /** The body parsed as JSON; throws a 400 answer when it is not JSON. */
  json(): unknown;
}

/** What a route handler answers. */
export interface RouteResponse {
  status?: number;
  headers?: Record<string, string>;
  /** Objects are sent as JSON. */
  body?: unknown;
}

export type RouteHandler = (req: RouteRequest) => RouteResponse | Promise<RouteResponse>;

/** What `setup` and `teardown` get: no bot, the plugin's own state. */
export interface SetupContext<C> extends BaseContext<C> {
  /** This plugin's state shared by every bot. */
  readonly state: PluginState;
  /**
   * Queues an event of one of this plugin's push sources for the bots with a rule on it (or
   * `event.bot` only), durably, exactly once per key. Resolves with the bots it was queued for.
   */
  emit(source: string, event: PushEvent): Promise<string[]>;
  /** The bots with an enabled rule on a source of this plugin, now. */
  listeners(source: string): string[];
  /**
   * Answers HTTP requests to `/plugins/<name><path>` on the pinbot server (`pinbot serve` and the
   * test kit). `path` may hold `:params`, e.g. `/:bot`.
   */
  route(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, handler: RouteHandler): void;
}

/** An action a plugin adds: `<plugin>.<name>` in a rule's `do:`. */
export interface ActionSpec<S, C> {
  description?: string;
  /** JSON Schema of the arguments (validated at load, and after templates at run time). */
  schema: S;
  example?: unknown;
  /** `api` (default): changes the server; skipped in dry runs. `local`: runs in dry runs too. */
  effect?: 'api' | 'local';
  /** Strings in the arguments are Liquid templates (default true). */
  templated?: boolean;
  /** What it returns is the step's result (JSON); `steps[i]` in later templates. */
  run(ctx: ActionContext<C>, args: Infer<S>): unknown;
}

/** What a condition's test answers: whether it holds, or that and what it found (shown in traces). */
export type Verdict = boolean | { ok: boolean; detail?: string };

/** A condition a plugin adds: `<plugin>.<name>: value` in a rule's `if:`. */
export interface ConditionSpec<S, C> {
  description?: string;
  /** JSON Schema of the value written in the bot file. */
  schema: S;
  example?: unknown;
  /** True when it holds; or `{ ok, detail }` to say what was found (shown in traces). */
  test(ctx: ConditionContext<C>, value: Infer<S>): Verdict | Promise<Verdict>;
}

/**
 * An event source a plugin adds; its events trigger `on: <plugin>.<name>`. With `poll` it is a
 * poll source (run on the bot's poll cadence, from a persisted cursor); without, a push source
 * (events come from `emit` in setup: a timer, or an HTTP route).
 */
export interface SourceSpec<C> {
  description?: string;
  /** A sample event payload (docs, and the fields conditions may name). */
  example?: Record<string, unknown>;
  /** Where a `reply` to such an event goes. */
  replyTo?(payload: Record<string, unknown>): { pin: string } | { conversation_id: string } | undefined;
  /**
   * Reads new events from `cursor` (undefined on the first poll ever: take a baseline). The
   * cursor returned is persisted with the events in one write.
   */
  poll?(ctx: PollContext<C>, cursor: unknown): Promise<{ events: SourceEvent[]; cursor: unknown }>;
  /**
   * What a poll source reads. `outside` (default): something pinbot does not see change (a
   * file, an HTTP feed) — polled at every `poll` interval of the bot, on a virtual clock too.
   * `pinbot`: only pinbot's own data through `ctx.api` — polled when a change concerns the
   * bot's user (and at its cadence on a real clock); a virtual clock then skips idle polls.
   */
  reads?: 'outside' | 'pinbot';
}

/** What definePlugin takes. `C` is the config type, inferred from `configSchema`. */
export interface PluginSpec<CS, A, K, C = Infer<CS>> {
  /** Lower-case letters, digits and `_`: the namespace of its entries (`karma.give`). */
  name: string;
  /** The plugin's own version (semver). */
  version: string;
  /** The pinbot versions it works with (a semver range, e.g. `^0.1.0`), checked before load. */
  pinbot: string;
  description?: string;
  configSchema?: CS;
  actions?: { [N in keyof A]: ActionSpec<A[N], C> };
  conditions?: { [N in keyof K]: ConditionSpec<K[N], C> };
  sources?: Record<string, SourceSpec<C>>;
  setup?(ctx: SetupContext<C>): unknown;
  teardown?(ctx: SetupContext<C>): unknown;
}

/** Marks what definePlugin returned. Internal. */
export const PLUGIN = Symbol.for('pinbot.plugin');

/** A plugin: what definePlugin returns, and what a plugin module exports by default. */
export interface Plugin<C = unknown> extends PluginSpec<unknown, Record<string, unknown>, Record<string, unknown>, C> {
  readonly [PLUGIN]: true;
}
