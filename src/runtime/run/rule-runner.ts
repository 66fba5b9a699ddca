import type { Release } from '../../clock/clock.js';
import type { TraceReason } from '../contract/trace-reasons.js';
import { DEFAULT_LOOP_GUARD } from '../define/bot.js';
import type { InboxEntry } from '../state/bot-state.js';
import { metrics } from '../../telemetry/metrics.js';
import { FairQueue } from './fair-queue.js';
import { DialogTimers } from './dialog-timers.js';
import { endParked } from './dialog-end.js';
import { DialogState } from '../state/dialog-state.js';
import { dialogId, type DialogRecord } from '../state/bot-state.js';
import { startTrace } from '../state/traces.js';
import { LoopGuard } from './loop-guard.js';
import { Restarts } from './run-control.js';
import { finishRun, newTrace, triggerOf } from './run-record.js';
import { runRule } from './rule-run.js';
import type { RuleRun, RunnerContext, RunnerDeps } from './runner-deps.js';

export type { RunnerDeps } from './runner-deps.js';

/**
 * Runs the rules of one bot over its inbox entries. Each matching rule gets a run, started in
 * event order and governed by its mode (queued: one after another, round robin by sender;
 * single: skip while one runs; parallel; restart). One run (rule-run.ts) decides once, then
 * takes its steps (step.ts); each step with an effect is written ahead with its exact arguments
 * and carries an Idempotency-Key, so a run resumed after a crash repeats nothing. Transient
 * failures are retried in place (retry.ts); a 401 stops the bot; other errors fail the step
 * (failure.ts turns them into trace reasons). Every run is traced, including why a rule did
 * not run. This class keeps the modes, the queues and the clock holds (idle).
 */
export class RuleRunner {
  /** Per queued rule: its runs, one at a time, round robin by sender. */
  private readonly queues = new Map<string, FairQueue>();
  private active = 0;
  private waiters: Array<() => void> = [];
  /** One clock hold per run taking a step: a virtual clock's advance waits for them. */
  private readonly holds: Release[] = [];
  /** What every run of this runner shares. */
  private readonly ctx: RunnerContext;

  constructor(private readonly d: RunnerDeps) {
    const guard = new LoopGuard(
      d.self.bot.loopGuard === false ? undefined : (d.self.bot.loopGuard ?? DEFAULT_LOOP_GUARD),
      d.writes.state,
    );
    const timers = new DialogTimers(d.limits.clock, (id) => this.dialogDue(id));
    const dialogs = new DialogState(d.writes.state);
    // served at /metrics while this runner runs the bot
    const gauge = metrics.botDialogsWaiting.source(() => [
      { labels: { bot: d.self.bot.name }, value: dialogs.count() },
    ]);
    d.limits.signal.addEventListener(
      'abort',
      () => {
        timers.clear();
        gauge();
      },
      { once: true },
    );
    this.ctx = {
      ...d,
      guard,
      running: new Map(),
      restarts: new Restarts(),
      busy: (delta) => this.busy(delta),
      dialogs,
      timers,
    };
  }

  /** Who is in a dialog with this bot now (oldest first). */
  dialogs(): DialogRecord[] {
    return this.ctx.dialogs.list();
  }

  /**
   * Ends the dialogs of a person (in one conversation, or all of theirs) whose runs wait:
   * traced `dialog_ended`. Returns those ended; a dialog busy with an answer is left alone.
   */
  async endDialogs(pin: string, conversation?: string, message = 'ended by an operator'): Promise<DialogRecord[]> {
    const ended: DialogRecord[] = [];
    for (const rec of this.ctx.dialogs.ofPerson(pin)) {
      if (conversation !== undefined && rec.conversation !== conversation) continue;
      if (await endParked(this.ctx, rec, { reason: 'dialog_ended', message })) ended.push(rec);
    }
    return ended;
  }

  /**
   * At the start: dialogs the bot file no longer holds (their rule is gone, or the step no longer
   * asks) end, traced `dialog_ended`; the others resume with their run (dispatched from the inbox).
   */
  async endOrphans(): Promise<void> {
    for (const rec of this.ctx.dialogs.list()) {
      const rule = this.d.self.bot.rules.find((r) => r.id === rec.rule);
      const step = rule?.steps[rec.step];
      // an ask step, or a plugin's action (its ctx.ask)
      if ((step?.action.name === 'ask' || step?.action.plugin) && this.d.writes.state.entry(rec.entry)) continue;
      const why = !rule
        ? `rule ${rec.rule} was removed from the bot file`
        : `step ${rec.step} of rule ${rec.rule} no longer asks (the bot file changed)`;
      await endParked(this.ctx, { ...rec, waiting: true }, { reason: 'dialog_ended', message: why });
    }
  }

  /** A dialog's timer fired: its run is woken (held, so a virtual clock's advance waits for it). */
  private dialogDue(id: string): void {
    if (this.d.limits.signal.aborted) return;
    const release = this.d.limits.clock.hold(`bot ${this.d.self.bot.name}: dialog timeout`);
    this.ctx.dialogs
      .due(id, this.d.limits.clock.now())
      .then((rec) => rec && this.d.wake?.(rec.entry))
      .catch((err) => this.d.writes.log.error({ err, dialog: id }, 'a dialog timeout could not be handled'))
      .finally(release);
  }

  /**
   * A message whose sender has a dialog waiting in that conversation goes to the dialog (no rule
   * runs on it; traced `answered_dialog`). True when it did.
   */
  private async routed(entry: InboxEntry): Promise<boolean> {
    const e = entry.event;
    if (e.type !== 'message.received' || Object.keys(entry.runs).length > 0) return false;
    const pin = (e.payload.sender as { pin_code?: string } | undefined)?.pin_code;
    if (!pin || this.ctx.dialogs.ofPerson(pin).length === 0) return false;
    const direct = (e.payload.conversation as { type?: string } | undefined)?.type === 'direct';
    const ids = [
      dialogId(this.d.self.bot.name, pin, String(e.payload.conversation_id)),
      ...(direct ? [dialogId(this.d.self.bot.name, pin, 'direct')] : []),
    ];
    this.busy(1);
    try {
      const r = await this.ctx.dialogs.route(entry, ids);
      if (!r) return false;
      const trace = startTrace({
        bot: this.d.self.bot,
        rule: r.rec.rule,
        event: e,
        who: r.rec.person,
        at: this.d.limits.clock.now(),
        resumed: false,
      });
      this.d.writes.traces.add({
        ...trace,
        outcome: 'not_run',
        reason: 'answered_dialog',
        message: `an answer to the dialog of rule ${r.rec.rule} (step ${r.rec.step})`,
      });
      if (r.wake) this.d.wake?.(r.rec.entry);
      return true;
    } finally {
      this.busy(-1);
    }
  }

  /** Handles an entry; resolves when every rule's run for it has ended (or the bot stops). */
  async handle(entry: InboxEntry): Promise<void> {
    if (await this.routed(entry)) return;
    const rules = this.d.self.bot.rules.filter(
      (r) =>
        r.triggers.some((t) => t.def.name === entry.event.type) && (!entry.event.rule || entry.event.rule === r.id),
    );
    const todo = rules.filter((r) => !entry.runs[r.id]?.done);
    if (todo.length === 0) {
      this.busy(1);
      try {
        await this.d.writes.state.finish(entry.id);
      } finally {
        this.busy(-1);
      }
      return;
    }
    const shared = { remaining: todo.length };
    await Promise.all(todo.map((rule) => this.schedule({ runner: this.ctx, rule, entry, shared })));
  }

  /** Resolves once no run is taking a step (runs in `wait` or backoff do not count). */
  idle(): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (this.active !== 0) return void this.waiters.push(check);
        setImmediate(() => (this.active === 0 ? resolve() : this.waiters.push(check)));
      };
      check();
    });
  }

  private busy(delta: number): void {
    this.active += delta;
    if (delta > 0) this.holds.push(this.d.limits.clock.hold(`bot ${this.d.self.bot.name}: run`));
    else this.release(this.holds.pop());
    if (this.active === 0) {
      const w = this.waiters;
      this.waiters = [];
      for (const f of w) f();
    }
  }

  /**
   * Gives a clock hold back. On a virtual clock, once what the run committed is durable: an
   * embedded bot's writes are answered at commit, and the commit feed (which wakes the bots its
   * replies concern) tells of them only then — an advance waits for it.
   */
  private release(hold: Release | undefined): void {
    if (!hold) return;
    if (!this.d.limits.clock.virtual) return hold();
    void this.d.writes.state
      .durable()
      .catch(() => undefined)
      .finally(hold);
  }

  /** Starts a run as its rule's mode says: at once, or in the rule's fair queue (bounded per sender). */
  private schedule(run: RuleRun): Promise<void> {
    const { rule, entry } = run;
    if (rule.mode !== 'queued') return runRule(run);
    let queue = this.queues.get(rule.id);
    if (!queue) this.queues.set(rule.id, (queue = new FairQueue(this.d.self.bot.perSender?.maxQueued)));
    const actor = triggerOf(run).actor?.(entry.event.payload, this.d.self.me);
    // a run resumed after a restart is not refused: it had its place already
    const resumed = !!entry.runs[rule.id]?.decision;
    const queued =
      queue.push(actor?.pin_code ?? '', () => runRule(run)) ??
      (resumed ? queue.push(`resumed ${entry.id}`, () => runRule(run)) : undefined);
    if (queued) return queued;
    const who = actor ? `${actor.display_name} (${actor.pin_code})` : 'this sender';
    return this.skip(
      run,
      'sender_backlog',
      `${who} already has ${this.d.self.bot.perSender!.maxQueued} events waiting for this rule (per_sender.max_queued)`,
    );
  }

  /** Ends a rule's run for an entry without running it (traced with the reason). */
  private async skip(run: RuleRun, reason: TraceReason, message: string): Promise<void> {
    this.busy(1);
    try {
      const trace = { ...newTrace(run, false), outcome: 'not_run' as const, reason, message };
      await finishRun({ run, progress: { decision: { run: false, reason }, steps: [] }, pending: { spend: 0 } });
      this.d.writes.traces.add(trace);
    } finally {
      this.busy(-1);
    }
  }
}
