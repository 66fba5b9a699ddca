/**
 * Every reason a trace can give for a rule that did not run or did not finish, in one place:
 * the code, when it is given (`outcome`), what it means and what to do. The `Trace` type takes
 * its `reason` from here, and test/bots/trace-reasons.test.ts checks that docs/bots.md
 * ("Trace reasons") lists every code with this meaning.
 */

/** One entry of the catalogue. */
export interface TraceReasonInfo {
  /** The trace outcome that carries this reason. */
  outcome: 'not_run' | 'failed' | 'interrupted' | 'waiting' | 'done';
  /** What happened, in one sentence (docs/bots.md says the same). */
  meaning: string;
  /** What the bot's owner can do about it. */
  todo: string;
}

/** The catalogue: trace reason code → its outcome, meaning and what to do. */
export const TRACE_REASONS = {
  disabled: {
    outcome: 'not_run',
    meaning: 'the rule has `enabled: false`',
    todo: 'remove `enabled: false` from the rule to run it',
  },
  condition_false: {
    outcome: 'not_run',
    meaning:
      'a condition of `if:` did not hold (or could not be evaluated: a liquid: ' +
      'condition fails closed); the trace shows each condition and the value it saw',
    todo: 'compare the value seen with the condition; nothing to do if the rule was meant to skip this event',
  },
  cooldown: {
    outcome: 'not_run',
    meaning: 'the rule ran within its `cooldown` (for the rule, the sender or the conversation)',
    todo: 'wait, or shorten `cooldown`',
  },
  throttled: {
    outcome: 'not_run',
    meaning: 'the rule already ran `max_runs` times within its `throttle` window',
    todo: 'wait, or raise `throttle.max_runs`',
  },
  single_running: {
    outcome: 'not_run',
    meaning: 'mode `single`: a run of this rule was still going',
    todo: 'use `mode: queued` if every event must be handled',
  },
  sender_backlog: {
    outcome: 'not_run',
    meaning: 'the sender already had `per_sender.max_queued` events waiting for this queued rule',
    todo: 'nothing if the sender floods; raise `per_sender.max_queued` otherwise',
  },
  from_bot: {
    outcome: 'not_run',
    meaning: 'the event was caused by a user a bot acts as, and `ignore_bots` is on',
    todo: 'turn `ignore_bots` off to answer other bots',
  },
  loop_suspected: {
    outcome: 'not_run',
    meaning:
      "this counterpart kept replying to the bot's answers at machine speed in this " +
      'conversation: the loop guard paused that exchange (others in the conversation ' +
      'are still answered)',
    todo: 'find the other bot or auto-responder; tune (`reply_within`, `max_replies`) or turn off `loop_guard`',
  },
  limit: {
    outcome: 'failed',
    meaning:
      'a guardrail refused a step: a money limit (`limits.max_per_transfer`, ' +
      "`max_per_day`, `send_to`), a plugin's state is full (`plugins.state`), or the " +
      "bot's memory would pass a bound (`memory.max_keys`, …)",
    todo:
      'raise the limit in the bot file if the transfer was meant; for a full plugin ' +
      'state, delete keys it no longer needs or raise `plugins.state` in config.yaml; ' +
      'for memory, set `memory.ttl`, forget keys or raise the bound',
  },
  api: {
    outcome: 'failed',
    meaning: 'the server refused a step (`insufficient_funds`, `user_not_found`, …); the error has its code',
    todo: 'read the API error code in the step; fix the data or the rule',
  },
  unauthorized: {
    outcome: 'failed',
    meaning: 'the server refused the API key (401); the bot stopped',
    todo: 'fix `key:` (or the user) in the bot file; it reloads',
  },
  timeout: {
    outcome: 'failed',
    meaning: 'a step or the conditions took longer than `runtime.step_timeout` and were abandoned',
    todo: 'make the step faster or raise `runtime.step_timeout`',
  },
  failed: {
    outcome: 'failed',
    meaning: 'a step threw, e.g. a template read a field the event lacks; the step names the error',
    todo: 'read the step error; fix the template or the rule',
  },
  plugin_failed: {
    outcome: 'failed',
    meaning: "a plugin's code threw; the trace names the plugin and the first frame of its code",
    todo: 'fix the plugin at the frame shown',
  },
  plugin_timeout: {
    outcome: 'failed',
    meaning: "a plugin's call took longer than `runtime.step_timeout`",
    todo: 'make the plugin honour its abort signal, or raise `runtime.step_timeout`',
  },
  plugin_unavailable: {
    outcome: 'failed',
    meaning: 'the plugin was switched off after failing outside any call, until pinbot restarts',
    todo: '`pinbot plugins list` says why; fix the plugin and restart',
  },
  restarted: {
    outcome: 'failed',
    meaning: 'mode `restart`: a newer event stopped this run and started over',
    todo: 'nothing: that is what `mode: restart` does',
  },
  answered_dialog: {
    outcome: 'not_run',
    meaning:
      "the message was an answer: its sender's dialog (`ask`) waited in that " +
      "conversation, so no rule ran on it; the dialog's rule shows what it did with " +
      'it',
    todo: 'nothing: that is the routing of dialogs; a message after the dialog ended is an ordinary one again',
  },
  in_dialog: {
    outcome: 'not_run',
    meaning:
      "the rule asks, and the same person's dialog of this rule was still waiting " +
      '(from another conversation or trigger)',
    todo: 'use `mode: restart` to start the dialog over on a new trigger; or end the dialog (`pinbot bots end-dialog`)',
  },
  waiting_for_answer: {
    outcome: 'waiting',
    meaning: 'an `ask` sent its question and the run waits for the answer (until the time shown)',
    todo:
      'nothing: an answer, a cancel word or the timeout continues the run; `pinbot bots ' +
      'dialogs NAME` lists who is in a dialog',
  },
  dialog_timeout: {
    outcome: 'done',
    meaning: "no answer came within the ask's `timeout`; the rule's `on_timeout` steps ran",
    todo: 'nothing, or lengthen `timeout:` of the ask',
  },
  dialog_cancelled: {
    outcome: 'done',
    meaning: "the person answered with one of the rule's `cancel_words`; the rule's `on_cancel` steps ran",
    todo: 'nothing; set `cancel_words:` on the rule to change the words ([] for none)',
  },
  invalid_answer: {
    outcome: 'failed',
    meaning: 'an `ask` got no valid answer in `attempts` tries; error.code is `invalid_answer` and `on_error` ran',
    todo: 'make the question say what it expects, or raise `attempts`',
  },
  dialog_ended: {
    outcome: 'failed',
    meaning:
      'a waiting dialog was ended from outside: by `pinbot bots end-dialog` (or the ' +
      'console), or because a reload removed the step that asked',
    todo: 'nothing: the person can start again',
  },
  stopping: {
    outcome: 'interrupted',
    meaning: 'the bot stopped (reload, shutdown) during the run; it resumes at the next start',
    todo: 'nothing: the run resumes where it stopped',
  },
} as const satisfies Record<string, TraceReasonInfo>;

/** A trace reason code. */
export type TraceReason = keyof typeof TRACE_REASONS;

/** Reasons a failing step can end its run with (what an error is sorted into). */
export type StepFailureReason = Extract<
  TraceReason,
  'limit' | 'api' | 'timeout' | 'failed' | 'plugin_failed' | 'plugin_timeout' | 'plugin_unavailable' | 'invalid_answer'
>;

/** Whether a string is a code of the catalogue. */
export function isTraceReason(code: unknown): code is TraceReason {
  return typeof code === 'string' && Object.hasOwn(TRACE_REASONS, code);
}
