import { ApiRequestError, UnauthorizedError } from '../../client/errors.js';
import { StepTimeoutError } from '../../util/step-timeout.js';
import type { StepFailureReason, TraceReason } from '../contract/trace-reasons.js';
import { LimitError, traceInfo, type ActionDef } from '../contract/types.js';
import type { CompiledStep } from '../define/bot.js';
import { DailyCapError, type StepErrorKind, type StepProgress } from '../state/bot-state.js';
import type { Trace } from '../state/traces.js';
import { Interrupted } from './retry.js';

/** A step's error as its progress records it. */
export type StepError = NonNullable<StepProgress['error']>;

/**
 * The one place an error becomes a trace reason (codes: contract/trace-reasons.ts). A step's
 * error: the reason the error carries (a plugin's), else a guardrail (`limit`), a refusal of
 * the server (`api`, with its code), the step timeout (`timeout`, `plugin_timeout` for a
 * plugin's action), or `failed`.
 */
export function stepErrorOf({ err, action }: { err: unknown; action: ActionDef }): StepError {
  const info = traceInfo(err);
  const timeout = err instanceof StepTimeoutError ? (action.plugin ? 'plugin_timeout' : 'timeout') : undefined;
  const kind: StepErrorKind =
    info?.traceReason ??
    (err instanceof LimitError || err instanceof DailyCapError
      ? 'limit'
      : err instanceof ApiRequestError
        ? 'api'
        : (timeout ?? 'failed'));
  const code = err instanceof ApiRequestError ? err.code : undefined;
  const message =
    timeout === 'plugin_timeout' && !info
      ? `plugin ${action.plugin}: ${(err as Error).message}`
      : (err as Error).message;
  const plugin = info?.plugin ?? action.plugin;
  return { kind, code, message, ...(plugin ? { plugin, frame: info?.frame } : {}) };
}

/** A step that failed for good: how its run ends in the trace. */
export interface StepFailure {
  failed: true;
  reason: StepFailureReason;
  message: string;
  /** A plugin's failure: the plugin, and the first frame of its own code. */
  plugin?: string;
  frame?: string;
}

/** Step errors whose message already names what ran out of time. */
const TIMEOUTS: ReadonlySet<string> = new Set(['timeout', 'plugin_timeout']);

/**
 * How a failed step ends its run: the reason (state written before 0.2 says `error`), and a
 * message naming the step. */
export function stepFailure({ step, error }: { step: CompiledStep; error: StepProgress['error'] }): StepFailure {
  const reason: StepFailureReason = error?.kind === undefined || error.kind === 'error' ? 'failed' : error.kind;
  const message = error?.message ?? 'failed';
  return {
    failed: true,
    reason,
    message: TIMEOUTS.has(reason) ? message : `step ${step.index + 1} (${step.action.name}) failed: ${message}`,
    plugin: error?.plugin,
    frame: error?.frame,
  };
}

/** How a trace ends: its outcome and a reason of the catalogue. */
export interface TraceEnding {
  outcome: Trace['outcome'];
  reason: TraceReason;
  message: string;
  plugin?: string;
  frame?: string;
}

/**
 * How a run that threw ends: `restarted` (mode restart: a newer event took over), `stopping`
 * (the bot stops; the run resumes at the next start), `unauthorized` (a 401), or the error's
 * own reason (`timeout`, a plugin's, `failed`).
 */
export function runEnding({
  err,
  restarted,
  stopping,
}: {
  err: unknown;
  restarted: boolean;
  stopping: boolean;
}): TraceEnding {
  if (restarted)
    return { outcome: 'failed', reason: 'restarted', message: 'a newer event restarted this rule (mode restart)' };
  if (err instanceof Interrupted || stopping)
    return {
      outcome: 'interrupted',
      reason: 'stopping',
      message: 'the bot stopped during this run; it resumes at the next start',
    };
  if (err instanceof UnauthorizedError)
    return {
      outcome: 'failed',
      reason: 'unauthorized',
      message: 'the server refused the API key (401); the bot stopped',
    };
  const info = traceInfo(err);
  return {
    outcome: 'failed',
    reason: info?.traceReason ?? (err instanceof StepTimeoutError ? 'timeout' : 'failed'),
    message: (err as Error).message,
    ...(info?.plugin ? { plugin: info.plugin, frame: info.frame } : {}),
  };
}
