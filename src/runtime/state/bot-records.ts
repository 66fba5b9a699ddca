import { defineCollection } from '../../store/core/types.js';
import type { StepFailureReason, TraceReason } from '../contract/trace-reasons.js';
import type { BotEvent, ConditionResult } from '../contract/types.js';

// What a bot keeps in the store, record by record: the collections BotState reads and writes
// (and `pinbot store` copies). The operations on them are in bot-state.ts.

/** How a step failed: its trace reason (state written before 0.2 says `error` for `failed`). */
export type StepErrorKind = StepFailureReason | 'error';

export interface BotMeta {
  readonly id: string;
  readonly vars: Record<string, unknown>;
  /**
   * The `vars:` of the file at the bot's last start: a start compares the file with it, and a
   * key whose value the file changed takes the file's value (absent in state written before 0.4).
   */
  readonly file_vars?: Record<string, unknown>;
  /** Last inbox sequence number handed out. */
  readonly seq: number;
  /** Times the bot has started (the startup event's id). */
  readonly boots: number;
  /** Cents sent on `date` (UTC, bot clock). */
  readonly spend: { date: string; cents: number };
  /** Per rule (or rule and sender / conversation): clock ms of the last run's start (cooldowns). */
  readonly last_run: Record<string, number>;
  /** Per throttle key: starts of the runs still inside the throttle's window. */
  readonly runs?: Record<string, number[]>;
  /**
   * Per poll source: when the bot started needing it (clock ms). A source's first poll treats
   * what happened after this as events, so nothing is lost while the first poll waits.
   */
  readonly baselines?: Record<string, number>;
  /** Per rule: when its trigger (a schedule) last fired — its due time, clock ms. */
  readonly schedules?: Record<string, number>;
  /** Conversations (or senders) the loop guard paused, until when (clock ms). */
  readonly paused?: Record<string, number>;
}

/** Where one poll source of one bot has read up to. */
export interface BotCursor {
  readonly id: string;
  readonly bot: string;
  readonly source: string;
  readonly data: unknown;
}

/** The state of one step of a run, persisted as it goes. */
export interface StepProgress {
  status: 'started' | 'done' | 'failed' | 'dry_run';
  /** The step's signature when it ran (see CompiledStep.sig). */
  sig?: string;
  /** Arguments as sent (written before the step runs, so a retry sends the same). */
  args?: unknown;
  result?: unknown;
  error?: { code?: string; message: string; kind: StepErrorKind; plugin?: string; frame?: string };
  duration_ms?: number;
  /** An `ask` step: where its dialog stands (see DialogRecord). A plugin step: its waiting ask's. */
  dialog?: AskProgress;
  /** A plugin step that asks: what its calls of `ctx.ask` and its effects gave, by position. */
  replay?: ReplayEntry[];
  /** A plugin step whose `ctx.ask` waits: its position in `replay` and what it asks. */
  asking?: PluginAsk;
  /** A plugin step ended by a dialog's timeout or cancel word its code did not catch. */
  ended?: 'timeout' | 'cancel';
}

/** A plugin's `ctx.ask` being answered: its position, and the ask as checked. */
export interface PluginAsk {
  at: number;
  question: string;
  retry?: string;
  expect: unknown;
  attempts: number;
  timeout_ms: number;
}

/**
 * One call of a plugin step, recorded for its replays: an ask (the question, the answer read,
 * or how it ended; the answers tried) or an effect (`reply`, `send`, `once:NAME`: its result).
 */
export type ReplayEntry =
  | {
      k: 'ask';
      q: string;
      value?: unknown;
      groups?: Record<string, string>;
      ended?: 'timeout' | 'cancel' | 'invalid_answer';
      message?: string;
      asked: number;
      answers: AskProgress['answers'];
    }
  | { k: 'effect'; name: string; r?: unknown };

/** Where an `ask` step stands: questions sent, answers read, the deadline. */
export interface AskProgress {
  /** The dialog's record id (person and conversation). */
  key: string;
  /** Questions sent so far (the question, then one retry per invalid answer). */
  sent: number;
  /** Invalid answers so far. */
  invalid: number;
  /** Clock ms the last question was sent, and when the answer is due. */
  asked_at?: number;
  until?: number;
  /** The answers read, in order (text cut to 200 characters), and why an invalid one was refused. */
  answers: Array<{ text: string; ok: boolean; why?: string; at: number }>;
  /** An answer taken from the dialog and not read yet (written in the same write that took it). */
  current?: { key: string; text: string; at: number };
}

/** The run of one rule for one event. */
export interface RunProgress {
  decision?: { run: boolean; reason?: TraceReason; conditions?: ConditionResult; match?: Record<string, string> };
  steps: StepProgress[];
  started_at?: number;
  done?: boolean;
}

/**
 * An event taken from a source but not yet fully handled, with the progress of each rule's run.
 * The source's cursor moves in the same write that inserts it, so an event is always either
 * ahead of the cursor or here: none is lost, and it leaves only when every run has finished.
 */
export interface InboxEntry {
  readonly id: string;
  readonly bot: string;
  readonly key: string;
  readonly event: BotEvent;
  readonly runs: Record<string, RunProgress>;
}

/**
 * A person in a dialog with a bot: while it exists, their messages in that conversation are
 * the dialog's (queued here in the same write that removes them from the inbox) and no rule
 * runs on them. `conversation` is a conversation id, or `direct` when the question went to
 * the person's PIN. One per bot, person and conversation.
 */
export interface DialogRecord {
  readonly id: string;
  readonly bot: string;
  readonly rule: string;
  /** The inbox entry whose run asks, and its ask step. */
  readonly entry: string;
  readonly step: number;
  readonly person: { id: string; pin_code: string; display_name: string };
  readonly conversation: string;
  /** Clock ms: the dialog began; the last question went out; the answer is due. */
  readonly since: number;
  readonly asked_at?: number;
  readonly until?: number;
  /** The run is parked waiting (an answer or the timer wakes it). */
  readonly waiting: boolean;
  /** Messages routed to the dialog and not read yet, oldest first. */
  readonly queue: readonly BotEvent[];
}

/** The id of a dialog record (bot names, PINs and conversation ids have no `:`; ids hold no NUL on PostgreSQL). */
export const dialogId = (bot: string, pin: string, conversation: string) => `${bot}:${pin}:${conversation}`;

// a person's dialogs are next to each other in the bot's ids (DialogState.ofPerson): no index of
// their own, which took a map entry, a key and a list per waiting dialog
export const BotDialogs = defineCollection<DialogRecord>({ name: 'bot_dialogs', multi: { bot: (r) => r.bot } });

export const BotMetas = defineCollection<BotMeta>({ name: 'bot_meta' });
export const BotCursors = defineCollection<BotCursor>({ name: 'bot_cursors', multi: { bot: (c) => c.bot } });
export const BotInbox = defineCollection<InboxEntry>({
  name: 'bot_inbox',
  unique: { key: (e) => `${e.bot}\u0000${e.key}` },
  multi: { bot: (e) => e.bot },
});

/**
 * A value a plugin keeps for one bot (`ctx.state`), in the bot's state store. `applied` lists
 * the last writes made by steps (their idempotency key and write number), so a step that runs
 * again after a crash does not apply its write twice.
 */
export interface PluginStateRecord {
  readonly id: string;
  readonly plugin: string;
  readonly bot: string;
  readonly key: string;
  readonly value: unknown;
  /** The size it counts against `plugins.state.max_bytes` (key and value JSON); absent in records written before. */
  readonly bytes?: number;
  readonly applied?: readonly string[];
}

export const PluginStates = defineCollection<PluginStateRecord>({
  name: 'plugin_state',
  multi: { scope: (r) => `${r.plugin}\u0000${r.bot}`, bot: (r) => r.bot },
});

/** Whose memory a record holds: a person (by PIN) or a conversation (by id); `total` is the bot's usage. */
export type MemoryScope = 'person' | 'conversation';

/**
 * The memory a bot keeps of one person or conversation (`remember`, `ctx.memory`), or — scope
 * `total`, subject `''` — the bot's usage (keys and bytes of every subject, the bounds' count).
 * Entries carry their last write (clock ms: `memory.ttl` ages them from there); `applied` marks
 * the steps whose writes are in, so a step run again after a crash does not apply twice.
 */
export interface MemoryRecord {
  readonly id: string;
  readonly bot: string;
  readonly scope: MemoryScope | 'total';
  readonly subject: string;
  readonly entries: Readonly<Record<string, { readonly value: unknown; readonly at: number }>>;
  readonly keys: number;
  readonly bytes: number;
  /** `total` only: no entry was written before this (expired ones may be swept once it passes the ttl). */
  readonly oldest?: number;
  readonly applied?: readonly string[];
}

export const BotMemories = defineCollection<MemoryRecord>({ name: 'bot_memory', multi: { bot: (r) => r.bot } });
