import type { Release } from '../../clock/clock.js';
import type { TraceReason } from '../contract/trace-reasons.js';
import { DEFAULT_LOOP_GUARD } from '../define/bot.js';
import type { InboxEntry } from '../state/bot-state.js';
import { FairQueue } from './fair-queue.js';
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
    const guard = new LoopGuard(d.bot.loopGuard === false ? undefined : (d.bot.loopGuard ?? DEFAULT_LOOP_GUARD), d.state);
    this.ctx = { deps: d, guard, running: new Map(), restarts: new Restarts(), busy: (delta) => this.busy(delta) };
  }

  /** Handles an entry; resolves when every rule's run for it has ended (or the bot stops). */
  async handle(entry: InboxEntry): Promise<void> {
    const rules = this.d.bot.rules.filter((r) => r.triggers.some((t) => t.def.name === entry.event.type) && (!entry.event.rule || entry.event.rule === r.id));
    const todo = rules.filter((r) => !entry.runs[r.id]?.done);
    if (todo.length === 0) {
      this.busy(1);
      try {
        await this.d.state.finish(entry.id);
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
    if (delta > 0) this.holds.push(this.d.clock.hold(`bot ${this.d.bot.name}: run`));
    else this.holds.pop()?.();
    if (this.active === 0) {
      const w = this.waiters;
      this.waiters = [];
      for (const f of w) f();
    }
  }

  /** Starts a run as its rule's mode says: at once, or in the rule's fair queue (bounded per sender). */
  private schedule(run: RuleRun): Promise<void> {
    const { rule, entry } = run;
    if (rule.mode !== 'queued') return runRule(run);
    let queue = this.queues.get(rule.id);
    if (!queue) this.queues.set(rule.id, (queue = new FairQueue(this.d.bot.perSender?.maxQueued)));
    const actor = triggerOf(run).actor?.(entry.event.payload, this.d.me);
    // a run resumed after a restart is not refused: it had its place already
    const resumed = !!entry.runs[rule.id]?.decision;
    const queued = queue.push(actor?.pin_code ?? '', () => runRule(run)) ?? (resumed ? queue.push(`resumed ${entry.id}`, () => runRule(run)) : undefined);
    if (queued) return queued;
    const who = actor ? `${actor.display_name} (${actor.pin_code})` : 'this sender';
    return this.skip(run, 'sender_backlog', `${who} already has ${this.d.bot.perSender!.maxQueued} events waiting for this rule (per_sender.max_queued)`);
  }

  /** Ends a rule's run for an entry without running it (traced with the reason). */
  private async skip(run: RuleRun, reason: TraceReason, message: string): Promise<void> {
    this.busy(1);
    try {
      const trace = { ...newTrace(run, false), outcome: 'not_run' as const, reason, message };
      await finishRun({ run, progress: { decision: { run: false, reason }, steps: [] }, pending: { spend: 0 } });
      this.d.traces.add(trace);
    } finally {
      this.busy(-1);
    }
  }
}
