import { parseDuration } from '../../util/duration.js';
import { DEFAULT_ASK_TIMEOUT, DEFAULT_ATTEMPTS } from '../define/ask.js';
import { checkExpect, expectSchema, type Expect } from '../define/ask-expect.js';
import type { AskRequest, StepDialog } from '../contract/types.js';
import type { PluginAsk, ReplayEntry } from '../state/bot-state.js';

/**
 * Thrown by `ctx.ask` when the answer is not in yet: it unwinds the plugin's code, and the
 * engine parks the run until the answer (or the timer) comes, then runs the action again from
 * its start. A plugin must not swallow it: a try/catch around `ctx.ask` rethrows what is not
 * a DialogEnded.
 */
export class Suspended extends Error {
  constructor(readonly at: number) {
    super(
      `ctx.ask (call ${at + 1}) is waiting for its answer; this error unwinds the ` +
        `action until the answer comes — rethrow what you catch unless it is a ` +
        `DialogEnded`,
    );
    this.name = 'Suspended';
  }
}

/**
 * Thrown by `ctx.ask` when its dialog ended without an answer: `timeout` (no answer in
 * time), `cancel` (a cancel word of the rule), `invalid_answer` (no valid answer in `attempts`).
 * A plugin may catch it and carry on; uncaught, a timeout runs the rule's `on_timeout` steps, a
 * cancel word its `on_cancel` ones, and `invalid_answer` fails the step (`on_error` runs).
 *
 * @example try { await ctx.ask({ question: 'Size?' }) } catch (e) { if (e instanceof
 * DialogEnded && e.reason === 'timeout') … else throw e }
 */
export class DialogEnded extends Error {
  constructor(
    readonly reason: 'timeout' | 'cancel' | 'invalid_answer',
    message: string,
  ) {
    super(message);
    this.name = 'DialogEnded';
  }
}

/** A replay of a plugin step that does not call what its first run called at a position. */
export class ReplayMismatch extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReplayMismatch';
  }
}

const short = (s: string) => JSON.stringify(s.length > 60 ? `${s.slice(0, 60)}…` : s);

/** Checks what a plugin asks, as the YAML step's schema and checks would (a plugin bug throws, naming the key). */
export function checkAsk(req: AskRequest): Omit<PluginAsk, 'at'> {
  const r = (req ?? {}) as Partial<AskRequest>;
  if (typeof r.question !== 'string' || r.question.trim() === '')
    throw new Error(`ctx.ask: question must be non-empty text, not ${JSON.stringify(r.question)}`);
  const expect = (r.expect ?? 'text') as Expect;
  const shapes = (expectSchema.oneOf as Array<{ enum?: string[]; required?: string[] }>).flatMap(
    (s) => s.enum ?? s.required ?? [],
  );
  const kind = typeof expect === 'string' ? expect : expect && typeof expect === 'object' ? Object.keys(expect)[0] : '';
  if (
    !kind ||
    !shapes.includes(kind) ||
    (typeof expect === 'object' && Object.keys(expect).some((k) => !['matches', 'flags', kind].includes(k)))
  )
    throw new Error(
      `ctx.ask: expect must be one of ${shapes.join(', ')} (as in a bot's ask), not ${JSON.stringify(r.expect)}`,
    );
  if (
    typeof expect === 'object' &&
    'choice' in expect &&
    (!Array.isArray(expect.choice) || expect.choice.length === 0 || expect.choice.some((c) => typeof c !== 'string'))
  )
    throw new Error(`ctx.ask: expect.choice must be a list of texts, not ${JSON.stringify(expect.choice)}`);
  const problem = checkExpect(expect)[0];
  if (problem) throw new Error(`ctx.ask: expect.${problem.path.join('.')}: ${problem.message}`);
  const attempts = r.attempts ?? DEFAULT_ATTEMPTS;
  if (!Number.isInteger(attempts) || attempts < 1 || attempts > 20)
    throw new Error(`ctx.ask: attempts must be a whole number from 1 to 20, not ${JSON.stringify(r.attempts)}`);
  const timeout = r.timeout ?? DEFAULT_ASK_TIMEOUT;
  const ms = typeof timeout === 'number' ? timeout : parseDuration(String(timeout));
  if (ms === undefined || !Number.isFinite(ms) || ms <= 0)
    throw new Error(`ctx.ask: timeout must be a duration like "10m" or milliseconds, not ${JSON.stringify(r.timeout)}`);
  if (r.retry !== undefined && typeof r.retry !== 'string')
    throw new Error(`ctx.ask: retry must be text, not ${JSON.stringify(r.retry)}`);
  return {
    question: r.question,
    ...(r.retry?.trim() ? { retry: r.retry } : {}),
    expect,
    attempts,
    timeout_ms: Math.round(ms),
  };
}

/**
 * The replay of one plugin step (the StepDialog its ctx gets): its calls of `ctx.ask` and its
 * effects, numbered in the order they are made. A position recorded by an earlier run gives
 * what was recorded (an answer, a result) without asking or acting again; a call past the
 * record asks (the run suspends: Suspended) or acts (its result is recorded). A call that is
 * not the one recorded at its position — another question, an effect where an ask was — is a
 * plugin that is not deterministic: ReplayMismatch, the step fails naming both.
 *
 * @example const r = new StepReplay(sp.replay ?? [], 'ask.order'); await r.ask({ question: 'Size?' });
 */
export class StepReplay implements StepDialog {
  private next = 0;
  /** The ask the run waits for, once a `ctx.ask` found no recorded answer. */
  pending?: PluginAsk;
  /** The arguments of the call (what the step writes ahead when it suspends). */
  args?: unknown;
  /** The DialogEnded a `ctx.ask` threw, if any. */
  thrown?: DialogEnded;

  constructor(
    readonly history: ReplayEntry[],
    private readonly what: string,
  ) {}

  /** A call of the action starts (again, after a transient failure): positions count from 0. */
  begin(args: unknown): void {
    this.next = 0;
    this.pending = undefined;
    this.thrown = undefined;
    this.args = args;
  }

  private position(kind: string): number {
    if (this.pending) throw new Suspended(this.pending.at);
    const at = this.next++;
    const had = this.history[at];
    if (had && (had.k === 'ask' ? 'ctx.ask' : had.name) !== kind && !(had.k === 'ask' && kind === 'ctx.ask'))
      throw new ReplayMismatch(
        `${this.what}: call ${at + 1} is ${kind}, but when the action first ran it ` +
          `was ${had.k === 'ask' ? `ctx.ask(${short(had.q)})` : had.name} — an action ` +
          `that asks runs again from its start after each answer and must make the same ` +
          `calls in the same order (see docs/plugins.md "Asking")`,
      );
    return at;
  }

  async ask(req: AskRequest): Promise<{ value: unknown; groups?: Record<string, string> }> {
    const at = this.position('ctx.ask');
    const q = checkAsk(req);
    const had = this.history[at];
    if (!had) {
      this.pending = { at, ...q };
      throw new Suspended(at);
    }
    if (had.k !== 'ask') throw new Error('unreachable');
    if (had.q !== q.question)
      throw new ReplayMismatch(
        `${this.what}: call ${at + 1} asks ${short(q.question)}, but when the action ` +
          `first ran it asked ${short(had.q)} there — an action that asks runs again ` +
          `from its start after each answer and must ask the same questions in the same ` +
          `order (see docs/plugins.md "Asking")`,
      );
    if (had.ended) throw (this.thrown = new DialogEnded(had.ended, had.message ?? `the dialog ended: ${had.ended}`));
    return { value: structuredClone(had.value), ...(had.groups ? { groups: { ...had.groups } } : {}) };
  }

  async effect<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const at = this.position(name);
    const had = this.history[at];
    if (had?.k === 'effect') return structuredClone(had.r) as T;
    const r = await fn();
    // what the effect gave is kept, as JSON, for the replays (a message sent: its record)
    this.history[at] = { k: 'effect', name, ...(r === undefined ? {} : { r: JSON.parse(JSON.stringify(r)) }) };
    return r;
  }

  /** Whether the action made a recorded call (an ask, or an effect after one). */
  get asked(): boolean {
    return this.pending !== undefined || this.history.some((e) => e.k === 'ask');
  }
}
