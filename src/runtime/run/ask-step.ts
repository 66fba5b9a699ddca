import { UnauthorizedError } from '../../client/errors.js';
import { withStepTimeout } from '../../util/step-timeout.js';
import { askAction, DEFAULT_CANCEL_WORDS, type AskArgs } from '../define/ask.js';
import { describeExpect, readAnswer } from '../define/ask-expect.js';
import type { ActionRunContext, BotEvent, ReplyTarget } from '../contract/types.js';
import { renderDeep } from '../liquid/templates.js';
import { assertVariables, templatePaths, templatesIn } from '../liquid/template-check.js';
import { dialogId, type AskProgress, type DialogRecord, type StepProgress } from '../state/bot-state.js';
import { crashPoint } from './crash-points.js';
import { stepErrorOf } from './failure.js';
import { Interrupted, retryTransient } from './retry.js';
import { idempotencyKey } from './run-context.js';
import { runWrite, written } from './run-record.js';
import type { StepRun } from './step.js';

/** An `ask` whose run now waits (an answer or the timer wakes it); `quiet`: nothing new happened. */
export interface Parked {
  parked: true;
  quiet: boolean;
}

/** What an ask that ended saved: the answer's value and the named groups of its pattern. */
export interface AskResult {
  save?: string;
  value?: unknown;
  groups?: Record<string, string>;
  answer?: string;
  /** How the dialog ended without an answer: no answer in time, or a cancel word. */
  ended?: 'timeout' | 'cancel';
  /**
   * What happened, for coverage: `answered` (valid at the first question), `re-asked` (a retry
   * was sent: answered after it, or no valid answer in the attempts), `timeout`, `cancel`.
   */
  outcome?: 'answered' | 're-asked' | 'timeout' | 'cancel';
  asked: number;
  answers: AskProgress['answers'];
}

const contentOf = (e: BotEvent) => (typeof e.payload.content === 'string' ? e.payload.content : '');

/** The answers an ask's result gives `answers` (its value under `save`, and its named groups). */
export function answersOf(result: unknown): Record<string, unknown> {
  const r = result as Partial<AskResult> | undefined;
  if (!r || r.ended) return {};
  return { ...(r.groups ?? {}), ...(r.save !== undefined ? { [r.save]: r.value } : {}) };
}

/**
 * An `ask` step (the engine's own, like `choose`): render the question and open the dialog
 * (write-ahead: the record and the run's progress in one write) → send the question (an
 * Idempotency-Key per question sent) → take the next answer, or park the run until a message
 * or the timer wakes it → read the answer: valid (saved, the dialog ends), a cancel word
 * (`on_cancel`), invalid (the retry is sent, up to `attempts`, then `invalid_answer`). Every
 * move is written before the next, so a run resumed after kill -9 sends nothing twice and
 * reads each answer once.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: longer than 80 lines before the rule; to split (issue 28 item 4)
export async function askStep(o: StepRun): Promise<StepProgress | Parked> {
  const { run, step, progress, scope, trigger, pending } = o;
  const { runner, rule, entry } = run;
  const d = runner.deps;
  const t0 = performance.now();
  const key = idempotencyKey(d.bot.name, rule.id, entry.key, step.index, step.sig);
  const done = (sp: StepProgress) =>
    (progress.steps[step.index] = { ...sp, sig: step.sig, duration_ms: Math.round(performance.now() - t0) });
  const target: ReplyTarget | undefined = trigger.replyTo?.(scope.event, scope.me);
  let sp = progress.steps[step.index];
  let quiet = true;
  if (sp?.status !== 'started') {
    let args: AskArgs;
    try {
      for (const t of templatesIn(step.args)) assertVariables(t.text, templatePaths(t.text), scope, entry.event.type);
      args = askAction.prepare!(
        await renderDeep(step.args, scope),
        undefined as unknown as ActionRunContext,
      ) as AskArgs;
    } catch (err) {
      return done({ status: 'failed', error: stepErrorOf({ err, action: step.action }) });
    }
    const who = trigger.actor?.(entry.event.payload, d.me);
    if (!who || !target)
      return done({
        status: 'failed',
        args,
        error: { kind: 'failed', message: `${trigger.name} events have no one to ask` },
      });
    if (d.dryRun) {
      d.log.info({ rule: rule.id, step: step.index, args }, 'dry run: would ask');
      return done({ status: 'dry_run', args });
    }
    const conversation = 'conversation_id' in target ? target.conversation_id : 'direct';
    const id = dialogId(d.bot.name, who.pin_code, conversation);
    sp = { status: 'started', sig: step.sig, args, dialog: { key: id, sent: 0, invalid: 0, answers: [] } };
    progress.steps[step.index] = sp;
    const rec: DialogRecord = {
      id,
      bot: d.bot.name,
      rule: rule.id,
      entry: entry.id,
      step: step.index,
      conversation,
      person: { id: who.id, pin_code: who.pin_code, display_name: who.display_name },
      since: d.clock.now(),
      waiting: false,
      queue: [],
    };
    const held = await runner.dialogs.open(rec, runWrite({ run, progress, pending }));
    if (held) {
      const message = `${who.display_name} (${who.pin_code}) is already in a dialog of rule ${held.rule} in this conversation`;
      return done({ status: 'failed', args, error: { kind: 'failed', code: 'dialog_busy', message } });
    }
    written(pending);
  }
  const args = sp.args as AskArgs;
  const dl = sp.dialog!;
  const write = () => runWrite({ run, progress, pending });
  const end = async (out: StepProgress) => {
    const sp2 = done(out);
    runner.timers.cancel(dl.key);
    const requeued = await runner.dialogs.end(dl.key, write(), entry.id);
    written(pending);
    // handled once this run has ended: what the person wrote next comes after the bot's answer
    (run.requeued ??= []).push(...requeued.map((e) => e.id));
    return sp2;
  };
  const result = (extra: Partial<AskResult>): AskResult => ({
    ...(args.save ? { save: args.save } : {}),
    ...extra,
    asked: dl.sent,
    answers: dl.answers,
  });
  const cancelWords = new Set((rule.cancelWords ?? DEFAULT_CANCEL_WORDS).map((w) => w.trim().toLowerCase()));
  for (;;) {
    if (!dl.current && dl.sent <= dl.invalid) {
      // the question, or after an invalid answer its retry: one Idempotency-Key per question sent
      const text = dl.sent === 0 ? args.question : (args.retry ?? args.question);
      try {
        await send(o, target!, text, `${key}:q${dl.sent + 1}`);
        // the worst moment: the question went out and the write saying so did not happen
        crashPoint(`after-action:${d.bot.name}:${rule.id}:${step.index}`);
      } catch (err) {
        if (err instanceof Interrupted || err instanceof UnauthorizedError) throw err;
        return end({ status: 'failed', args, dialog: dl, error: stepErrorOf({ err, action: step.action }) });
      }
      const now = d.clock.now();
      Object.assign(dl, { sent: dl.sent + 1, asked_at: now, until: now + args.timeout_ms });
      await runner.dialogs.asked(dl.key, now, dl.until!, write());
      written(pending);
      quiet = false;
    }
    if (!dl.current) {
      const now = d.clock.now();
      const taken = await runner.dialogs.take(dl.key, now, dl.until!, (answer) => {
        dl.current = { key: answer.key, text: contentOf(answer), at: now };
        return write();
      });
      if (taken === 'parked') {
        runner.timers.arm(dl.key, dl.until!, () => runner.dialogDue(dl.key));
        return { parked: true, quiet };
      }
      if (taken === 'timeout')
        return end({ status: 'done', args, dialog: dl, result: result({ ended: 'timeout', outcome: 'timeout' }) });
      if (taken === 'gone')
        return done({
          status: 'failed',
          args,
          dialog: dl,
          error: { kind: 'failed', code: 'dialog_ended', message: 'the dialog was ended' },
        });
      written(pending);
    }
    quiet = false;
    const cur = dl.current!;
    dl.current = undefined;
    if (cancelWords.has(cur.text.trim().toLowerCase())) {
      dl.answers.push({ text: cur.text.slice(0, 200), ok: false, why: 'a cancel word', at: cur.at });
      return end({
        status: 'done',
        args,
        dialog: dl,
        result: result({ ended: 'cancel', outcome: 'cancel', answer: cur.text }),
      });
    }
    const r = readAnswer(args.expect, cur.text);
    dl.answers.push({ text: cur.text.slice(0, 200), ok: r.ok, ...(r.ok ? {} : { why: r.why }), at: cur.at });
    if (r.ok)
      return end({
        status: 'done',
        args,
        dialog: dl,
        result: result({
          value: r.value,
          outcome: dl.invalid > 0 ? 're-asked' : 'answered',
          answer: cur.text.trim(),
          ...(r.groups && Object.keys(r.groups).length ? { groups: r.groups } : {}),
        }),
      });
    dl.invalid++;
    if (dl.invalid >= args.attempts) {
      const message = `no valid answer in ${args.attempts} attempt${args.attempts === 1 ? '' : 's'} (expected ${describeExpect(args.expect)}; last: ${JSON.stringify(cur.text.slice(0, 60))})`;
      return end({
        status: 'failed',
        args,
        dialog: dl,
        result: result({ outcome: 're-asked' }),
        error: { kind: 'invalid_answer', code: 'invalid_answer', message },
      });
    }
  }
}

/** Sends a question where `reply` would (retrying transient failures, under the step timeout). */
function send({ run, step }: StepRun, target: ReplyTarget, text: string, idempotencyKey: string): Promise<unknown> {
  const d = run.runner.deps;
  const what = `step ${step.index} (ask) of rule ${run.rule.id}`;
  return retryTransient({
    runner: run.runner,
    what: 'ask',
    fn: () =>
      withStepTimeout(
        what,
        d.stepTimeoutMs,
        (signal) => {
          const o = { idempotencyKey, signal };
          if ('conversation_id' in target)
            return d.api.conversations.send(target.conversation_id, { content: text }, o);
          return d.api.messages.send({ recipient_pin: target.pin, content: text }, o);
        },
        d.signal,
      ),
  });
}
