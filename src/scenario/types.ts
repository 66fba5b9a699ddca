import type { LocatedYaml } from '../util/yaml-errors.js';
import type { ScenarioCoverage } from './coverage/collect.js';

/** What `expect_event` / `expect_none` can wait for. */
export type EventKind = 'message' | 'transfer' | 'introduction' | 'contact_request';

/** A user as events name them: the scenario's name for them when they have one. */
export interface EventUser {
  name: string;
  pin_code: string;
}

/**
 * Something that happened, as a scenario sees it. `key` is unique per event: a transfer that
 * went from pending to accepted is two events (`transfer:txn_…:pending`, `…:accepted`).
 */
export interface ScenarioEvent {
  key: string;
  kind: EventKind;
  /** Ordering: the time of the change, then the id. */
  at: number;
  fields: Record<string, unknown>;
}

import type { JsonSchema } from '../util/json-schema.js';

export type { JsonSchema };
/** A path inside a YAML document (`['steps', 2, 'expect']`). */
export type Path = Array<string | number>;

/** One step as written, where it was written, and (for `use`) the fragment's steps. */
export interface StepNode {
  raw: Record<string, any>;
  kind: StepKind;
  located: LocatedYaml;
  /** The step's path in its file. */
  path: Path;
  /** `use:` the fragment's steps. */
  children?: StepNode[];
  /** `use:` the fragment's declared parameters (name → default, undefined when required). */
  params?: Record<string, { default?: unknown; required: boolean }>;
}

/** A user as steps see it (`users.alice.pin_code` in templates). */
export interface TargetUser {
  name: string;
  id: string;
  pin_code: string;
  display_name: string;
  api_key: string;
}

/**
 * Where a scenario runs: an embedded server on a virtual clock, or a remote server on real
 * time. Steps talk only to this.
 */
export interface Target {
  readonly mode: 'embedded' | 'remote';
  readonly baseUrl: string;
  readonly users: Record<string, TargetUser>;
  /** The scenario's time (virtual, or real for a remote server). */
  now(): number;
  /** Lets `ms` of scenario time pass: advances the virtual clock (firing what is due), or sleeps. */
  wait(ms: number): Promise<void>;
  /**
   * Moves towards `deadline` by the smallest useful step — to the next due timer on a virtual
   * clock, by `pollMs` of real time remotely — and says whether anything may have changed.
   */
  stepToward(deadline: number, pollMs: number): Promise<boolean>;
  /** Lets what is due now settle (no time passes). */
  settle(): Promise<void>;
  /** Moves the virtual clock to a time (embedded only). */
  advanceTo(ms: number): Promise<void>;
  /** Restarts the embedded server and its bots on the same data directory (embedded only). */
  restart(): Promise<void>;
  /** Everything of a kind that has happened so far, as events. */
  events(kind: EventKind): Promise<ScenarioEvent[]>;
  /**
   * Embedded only: prepares to leave the server up after the scenario (`--keep`) — writes the
   * users' keys to a file beside the data directory — and says where it is. `close` still stops it.
   */
  keep?(): KeptServer;
  /**
   * Embedded only: the runs of the scenario's bots since `since` (ms) that failed or did not
   * run — a step refused by the API, a condition that did not hold, a loop guard pausing an
   * exchange — with their trace reasons, for a failed `expect_event` to say why nothing came.
   */
  botRuns?(since: number): BotRunNote[];
  /** Embedded, with coverage on: what the run exercised so far (scenario/coverage/collect.ts). */
  coverage?(): ScenarioCoverage;
  close(): Promise<void>;
}

/** A bot's run that failed or did not run, as a failure shows it (see Target.botRuns). */
export interface BotRunNote {
  bot: string;
  /** A trace reason (contract/trace-reasons.ts): `failed`, `condition_false`, `loop_suspected`… */
  reason: string;
  /** One line: `bot jar › thank failed for transfer.received 2 from alice: api — reply: 404 …`. */
  line: string;
}

/** A failed scenario's server left up (`--keep`). */
export interface KeptServer {
  url: string;
  dataDir: string;
  /** A shell file setting `PINBOT_KEY_<USER>` for the curl lines (mode 0600). */
  keys: string;
  /** The scenario's bots (their traces: `pinbot bots trace NAME --data DIR`). */
  bots?: string[];
}

/**
 * The events that existed when a window opened: an `expect_none` counts only events that are
 * not in it (its window opens when the last step that acted before it starts — a request, a
 * clock move, a restart, a `use:` that acts — so it sees what that step caused).
 */
export interface EventWindow {
  /** Scenario time when the window opened. */
  at: number;
  /** The step whose start opened it (`3`, `5.1`), or `start` when no step acted before. */
  step: string;
  /** Keys of the events of each watched kind that existed then. */
  known: Map<EventKind, Set<string>>;
}

/** What a step's run may use. */
export interface StepContext {
  target: Target;
  /** Variables of templates: users, vars, captures, fragment parameters, loop variables. */
  scope: Record<string, unknown>;
  /** Sets a capture (visible to later steps). */
  capture(name: string, value: unknown): void;
  render<T = unknown>(value: unknown): T;
  node: StepNode;
  /** Runs a fragment's steps with extra variables (`use:`). */
  runChildren(children: StepNode[], vars: Record<string, unknown>): Promise<void>;
  /** Event keys already matched by an earlier `expect_event` (each event is matched once). */
  claimed: Set<string>;
  /** Hides API keys in text shown to people. */
  mask(text: string): string;
  /** For a kind with `windowKinds`: the events that existed when the last step that acted before it started. */
  window?: EventWindow;
  seed: number;
  /** The scenario's config overrides (the API's OpenAPI document depends on them). */
  config: Record<string, unknown>;
}

/** What a step reports when it passes (shown in reports). */
export interface StepInfo {
  detail?: string;
  logs?: string[];
}

/** A step that did not hold: its message, and the diff and curl line when there are some. */
export class StepFailure extends Error {
  constructor(
    message: string,
    readonly extra: { diff?: string; curl?: string } = {},
  ) {
    super(message);
    this.name = 'StepFailure';
  }
}

/** A problem found before anything runs, relative to the step being checked. */
export interface CheckContext {
  /** Reports a problem at `path` below the step (a key when `onKey`). */
  problem(path: Path, message: string, hint?: string, onKey?: boolean): void;
  /** Reports templates in `value` that refer to unknown variables or users. */
  templates(value: unknown, path: Path): void;
  /** Reports an `if:`-style expression referring to unknown variables. */
  condition(expr: string, path: Path): void;
  /** A user name, checked against the scenario's users (templates are checked as templates). */
  user(name: unknown, path: Path): void;
  /** Declares a capture made by this step (visible to later steps). */
  declare(name: string): void;
  /** The scenario's users. */
  readonly users: ReadonlySet<string>;
  /** True when the scenario will run against a remote server. */
  readonly remote: boolean;
  /** Loads, checks and returns a fragment's steps for `use:` (problems are reported). */
  fragment(
    file: string,
    withValues: Record<string, unknown>,
    path: Path,
  ): { children: StepNode[]; params: StepNode['params'] } | undefined;
}

/**
 * A kind of scenario step. Every kind is registered in the step registry; the scenario JSON
 * Schema, the validator and the docs are assembled from these entries.
 *
 * @example
 * const log: StepKind = { name: 'log', description: 'prints a line', schema: { properties: {
 * log: { type: 'string' } } }, label: (s) => `log`, run: async (s, ctx) => ({ logs:
 * [ctx.render(s.log)] }) };
 */
export interface StepKind<S extends Record<string, any> = Record<string, any>> {
  /** The key that marks a step of this kind (`request`, `clock`). */
  name: string;
  description: string;
  /** JSON Schema of the keys this kind adds to a step (its own key included). */
  schema: { properties: Record<string, JsonSchema>; required?: string[] };
  /** Set when the kind needs the embedded server: the message shown in remote mode. */
  embeddedOnly?: string;
  /** A short label for reports (`alice POST /wallet/send`). */
  label(step: S): string;
  /** Checks beyond the schema (users, templates, references), before anything runs. */
  check?(step: S, c: CheckContext): void;
  /**
   * Event kinds this step looks at from the start of the last step that acted before it
   * (`expect_none`): the runner notes the events of these kinds that exist when that step
   * starts and gives them to `run` as `ctx.window`.
   */
  windowKinds?(step: S): EventKind[];
  /**
   * False for a step that only looks (`expect_event`, `expect_none`, `assert`, `set`, `log`):
   * an `expect_none` window never opens at it. Default true. A `use:` acts when its fragment
   * has a step that acts.
   */
  acts?: boolean;
  run(step: S, ctx: StepContext): Promise<StepInfo | void>;
}
