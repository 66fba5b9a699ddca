import { UnauthorizedError } from '../../client/errors.js';
import type { UserRef } from '../../client/types.js';
import { withStepTimeout } from '../../util/step-timeout.js';
import { DEFAULT_CANCEL_WORDS } from '../define/ask.js';
import { describeExpect, readAnswer, type Expect } from '../define/ask-expect.js';
import type { BotEvent, ReplyTarget } from '../contract/types.js';
import { dialogId, type AskProgress, type DialogRecord, type StepProgress } from '../state/bot-state.js';
import { crashPoint } from './crash-points.js';
import { stepErrorOf } from './failure.js';
import { Interrupted, retryTransient } from './retry.js';
import { runWrite, written } from './run-record.js';
import type { StepRun } from './step.js';

/** An `ask` whose run now waits (an answer or the timer wakes it); `quiet`: nothing new happened. */
export interface Parked {
  parked: true;
  quiet: boolean;
}

/** What one question of a dialog asks (the YAML step's prepared args, or a plugin's `ctx.ask`). */
export interface Question {
  question: string;
  retry?: string;
  expect: Expect;
  attempts: number;
  timeout_ms: number;
}

/** How a question ended: answered, a timeout or cancel word, no valid answer, or a failure. */
export type TurnEnd =
  | { end: 'answered'; value: unknown; groups?: Record<string, string>; answer: string }
  | { end: 'timeout' }
  | { end: 'cancel'; answer: string }
  | { end: 'invalid'; message: string }
  | { end: 'failed'; error: NonNullable<StepProgress['error']> }
  | { end: 'gone' };

const contentOf = (e: BotEvent) => (typeof e.payload.content === 'string' ? e.payload.content : '');

/** Who is asked, and where the question goes: the event's actor, where `reply` would go. */
export function askee(o: StepRun): { who: UserRef; target: ReplyTarget } | undefined {
  const { self } = o.run.runner;
  const who = o.trigger.actor?.(o.run.entry.event.payload, self.me);
  const target = o.trigger.replyTo?.(o.scope.event, o.scope.me);
  return who && target ? { who, target } : undefined;
}

/**
 * Opens the dialog of a question at `step` (its progress, holding `dl`, is already in
 * `o.progress`): the record and the run's progress in one write. Returns the record that holds
 * that person and conversation when another run does.
 */
export async function openDialog(o: StepRun, who: UserRef, target: ReplyTarget): Promise<DialogRecord | undefined> {
  const { run, step, progress, pending } = o;
  const { self, limits } = run.runner;
  const conversation = 'conversation_id' in target ? target.conversation_id : 'direct';
  const rec: DialogRecord = {
    id: dialogId(self.bot.name, who.pin_code, conversation),
    bot: self.bot.name,
    rule: run.rule.id,
    entry: run.entry.id,
    step: step.index,
    conversation,
    // in the order of the event's sender: the waiting record shares that object (compactJson)
    person: { id: who.id, display_name: who.display_name, pin_code: who.pin_code },
    since: limits.clock.now(),
    waiting: false,
    queue: [],
  };
  const held = await run.runner.dialogs.open(rec, runWrite({ run, progress, pending }));
  if (!held) written(pending);
  return held;
}

/** A new dialog's progress: the record id of that person and conversation. */
export function newDialog(o: StepRun, who: UserRef, target: ReplyTarget): AskProgress {
  const conversation = 'conversation_id' in target ? target.conversation_id : 'direct';
  return { key: dialogId(o.run.runner.self.bot.name, who.pin_code, conversation), sent: 0, invalid: 0, answers: [] };
}

/**
 * Ends the dialog of `dl` with the run's write (the step's outcome is in `o.progress` already):
 * the record goes, its timer too, and messages it did not read are handled once the run ends.
 */
export async function closeDialog(o: StepRun, dl: AskProgress): Promise<void> {
  const { run, progress, pending } = o;
  run.runner.timers.cancel(dl.key);
  const requeued = await run.runner.dialogs.end(dl.key, runWrite({ run, progress, pending }), run.entry.id);
  written(pending);
  // handled once this run has ended: what the person wrote next comes after the bot's answer
  (run.requeued ??= []).push(...requeued.map((e) => e.id));
}

/** Sends the question, or after an invalid answer its retry (one Idempotency-Key per question sent). */
async function sendNext(o: StepRun, q: Question, dl: AskProgress, key: string, target: ReplyTarget) {
  const { self, limits } = o.run.runner;
  const text = dl.sent === 0 ? q.question : (q.retry ?? q.question);
  await send(o, target, text, `${key}:q${dl.sent + 1}`);
  // the worst moment: the question went out and the write saying so did not happen
  crashPoint(`after-action:${self.bot.name}:${o.run.rule.id}:${o.step.index}`);
  const now = limits.clock.now();
  Object.assign(dl, { sent: dl.sent + 1, asked_at: now, until: now + q.timeout_ms });
  await o.run.runner.dialogs.asked(dl.key, now, dl.until!, runWrite(o));
  written(o.pending);
}

/** Takes the next answer of the dialog, or parks the run (arming its timer). */
async function takeAnswer(o: StepRun, dl: AskProgress): Promise<'parked' | 'timeout' | 'gone' | 'taken'> {
  const { run, pending } = o;
  const { runner } = run;
  const now = runner.limits.clock.now();
  const taken = await runner.dialogs.take(dl.key, now, dl.until!, (answer) => {
    dl.current = { key: answer.key, text: contentOf(answer), at: now };
    return runWrite(o);
  });
  if (taken === 'parked') {
    // the timer holds the dialog's id only (the record's string, not a copy): a closure here
    // would keep the whole parked run
    runner.timers.arm(runner.dialogs.get(dl.key)?.id ?? dl.key, dl.until!);
    return 'parked';
  }
  if (typeof taken === 'string') return taken;
  written(pending);
  return 'taken';
}

/**
 * One question of a dialog, from where `dl` stands: send the question (or the retry) → take
 * the next answer, or park the run until a message or the timer wakes it → read the answer:
 * valid, a cancel word, or invalid (the retry is sent, up to `attempts`). Every move is written
 * before the next, so a run resumed after kill -9 sends nothing twice and reads each answer
 * once. The dialog is not closed here (see closeDialog).
 */
export async function converse(
  o: StepRun,
  q: Question,
  dl: AskProgress,
  key: string,
  target: ReplyTarget,
): Promise<TurnEnd | Parked> {
  const cancelWords = new Set((o.run.rule.cancelWords ?? DEFAULT_CANCEL_WORDS).map((w) => w.trim().toLowerCase()));
  let quiet = true;
  for (;;) {
    if (!dl.current && dl.sent <= dl.invalid) {
      try {
        await sendNext(o, q, dl, key, target);
      } catch (err) {
        if (err instanceof Interrupted || err instanceof UnauthorizedError) throw err;
        return { end: 'failed', error: stepErrorOf({ err, action: o.step.action }) };
      }
      quiet = false;
    }
    if (!dl.current) {
      const taken = await takeAnswer(o, dl);
      if (taken === 'parked') return { parked: true, quiet };
      if (taken === 'timeout') return { end: 'timeout' };
      if (taken === 'gone') return { end: 'gone' };
    }
    const cur = dl.current!;
    dl.current = undefined;
    if (cancelWords.has(cur.text.trim().toLowerCase())) {
      dl.answers.push({ text: cur.text.slice(0, 200), ok: false, why: 'a cancel word', at: cur.at });
      return { end: 'cancel', answer: cur.text };
    }
    const r = readAnswer(q.expect, cur.text);
    dl.answers.push({ text: cur.text.slice(0, 200), ok: r.ok, ...(r.ok ? {} : { why: r.why }), at: cur.at });
    if (r.ok)
      return { end: 'answered', value: r.value, answer: cur.text.trim(), ...(r.groups ? { groups: r.groups } : {}) };
    dl.invalid++;
    if (dl.invalid >= q.attempts) {
      const message =
        `no valid answer in ${q.attempts} attempt${q.attempts === 1 ? '' : 's'} ` +
        `(expected ${describeExpect(q.expect)}; last: ` +
        `${JSON.stringify(cur.text.slice(0, 60))})`;
      return { end: 'invalid', message };
    }
  }
}

/** Sends a question where `reply` would (retrying transient failures, under the step timeout). */
function send({ run, step }: StepRun, target: ReplyTarget, text: string, idempotencyKey: string): Promise<unknown> {
  const { self, limits } = run.runner;
  const what = `step ${step.index} (ask) of rule ${run.rule.id}`;
  return retryTransient({
    runner: run.runner,
    what: 'ask',
    fn: () =>
      withStepTimeout(
        what,
        limits.stepTimeoutMs,
        (signal) => {
          const o = { idempotencyKey, signal };
          if ('conversation_id' in target)
            return self.api.conversations.send(target.conversation_id, { content: text }, o);
          return self.api.messages.send({ recipient_pin: target.pin, content: text }, o);
        },
        limits.signal,
      ),
  });
}
