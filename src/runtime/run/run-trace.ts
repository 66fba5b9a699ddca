import { iso } from '../../clock/clock.js';
import type { CompiledStep } from '../define/bot.js';
import { metrics } from '../../telemetry/metrics.js';
import { SpanStatusCode, type Span } from '../../telemetry/tracing.js';
import type { RunProgress } from '../state/bot-state.js';
import { compact, type Trace, type TraceLog, type TraceSeen, type TraceStep } from '../state/traces.js';
import type { Decision } from './decide.js';
import type { StepFailure, TraceEnding } from './failure.js';
import { pluginAskSteps, pluginWaitingStep } from './dialog-plugin.js';

type StepProgress = RunProgress['steps'][number];

/** The plugin fields of a step's error, for its trace. */
const pluginOf = (sp: StepProgress) =>
  sp.error?.plugin ? { plugin: sp.error.plugin, ...(sp.error.frame ? { frame: sp.error.frame } : {}) } : {};

/** A step of a trace from its progress. */
const traceStep = (index: number, action: string, sp: StepProgress, extra: Partial<TraceStep>): TraceStep => ({
  index,
  action,
  status: sp.status as TraceStep['status'],
  args: compact(sp.args),
  result: compact(sp.result),
  error: sp.error?.message,
  ...pluginOf(sp),
  ...extra,
});

/**
 * The trace of one rule run, built as the run goes (in the manner of Home Assistant's
 * `trace_automation`): the run tells it what the decision read and decided, each step it took
 * and how it ended, and the trace is kept once, by `finished`, whatever happened. Nothing else
 * writes a trace's fields.
 */
export class RunTrace {
  /**
   * A dialog woken that parks again with nothing new (no question sent, no answer read): no trace.
   */
  private quiet = false;

  constructor(readonly trace: Trace) {}

  get resumed(): boolean {
    return this.trace.resumed === true;
  }

  /** What the decision read (vars, me, the contact checks made while deciding). */
  seen(seen: TraceSeen): void {
    this.trace.seen = seen;
  }

  /** A resumed run: the conditions its decision saw (it does not decide again). */
  decidedBefore(decision: Decision): void {
    this.trace.conditions = decision.conditions;
  }

  /** The decision's conditions, and when it does not run, why. */
  decided(decision: Decision): void {
    this.trace.conditions = decision.conditions;
    if (!decision.run)
      Object.assign(this.trace, { outcome: 'not_run', reason: decision.reason, message: decision.message });
  }

  /** A step taken now, or (`resumed`) one a run before this one took. */
  step(step: CompiledStep, sp: StepProgress, extra: Partial<TraceStep>): void {
    // a plugin's action that asked (ctx.ask): its questions and answers, then the step
    this.trace.steps.push(...pluginAskSteps(step, sp), traceStep(step.index, step.action.name, sp, extra));
  }

  /**
   * The run waits for an answer to `step` (an ask): the question, the dialog so far, and until
   * when. `quiet`: a resumed dialog that only waits again adds no trace.
   */
  waiting(step: CompiledStep, sp: StepProgress, quiet: boolean): void {
    const dl = sp.dialog;
    const args = sp.args as { question?: string } | undefined;
    this.trace.steps.push(
      ...pluginAskSteps(step, sp),
      sp.asking
        ? pluginWaitingStep(step, sp)
        : {
            index: step.index,
            action: 'ask',
            status: 'waiting',
            args: compact(args?.question),
            result: compact(
              dl ? { asked: dl.sent, answers: dl.answers, until: dl.until ? iso(dl.until) : undefined } : undefined,
            ),
          },
    );
    Object.assign(this.trace, {
      outcome: 'waiting',
      reason: 'waiting_for_answer',
      message: `waiting for an answer until ${dl?.until ? iso(dl.until) : '?'}`,
    });
    this.quiet = quiet;
  }

  /**
   * The steps are over: failed (a step failed for good), a dialog ended by its timeout or a
   * cancel word, a dry run (a step did not act), or done.
   */
  stepsOver(failed: StepFailure | undefined, ended: 'timeout' | 'cancel' | undefined): void {
    if (failed)
      this.ended({
        outcome: 'failed',
        reason: failed.reason,
        message: failed.message,
        plugin: failed.plugin,
        frame: failed.frame,
      });
    else if (ended)
      Object.assign(
        this.trace,
        ended === 'timeout'
          ? { reason: 'dialog_timeout', message: 'no answer in time: on_timeout ran' }
          : { reason: 'dialog_cancelled', message: 'a cancel word ended the dialog: on_cancel ran' },
      );
    else if (this.trace.steps.some((s) => s.status === 'dry_run')) this.trace.outcome = 'dry_run';
  }

  /** How the run ended, when it did not end as its steps say (it threw). */
  ended(e: TraceEnding): void {
    Object.assign(
      this.trace,
      { outcome: e.outcome, reason: e.reason, message: e.message },
      e.plugin ? { plugin: e.plugin, frame: e.frame } : {},
    );
  }

  /**
   * The run is over: its duration, its span's outcome, its metrics, and the trace kept in `traces`.
   */
  finished(o: { durationMs: number; span: Span | undefined; traces: TraceLog }): void {
    const trace = this.trace;
    trace.duration_ms = Math.round(o.durationMs);
    o.span?.setAttributes({
      'pinbot.outcome': trace.outcome,
      ...(trace.reason ? { 'pinbot.reason': trace.reason } : {}),
    });
    if (trace.outcome === 'failed') o.span?.setStatus({ code: SpanStatusCode.ERROR, message: trace.message });
    if (this.quiet) return;
    metrics.botRuns.inc([trace.bot, trace.rule, trace.outcome]);
    if (trace.outcome === 'not_run') metrics.botNotRun.inc([trace.bot, trace.rule, trace.reason ?? 'unknown']);
    o.traces.add(trace);
  }
}
