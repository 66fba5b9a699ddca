import type { CompiledStep } from '../define/bot.js';
import type { RunProgress, StepProgress } from '../state/bot-state.js';
import type { ConditionRunContext, ConditionResult, RunScope } from '../contract/types.js';

/** Raised inside a run of a `restart` rule that a newer event took over: the run ends for good. */
export class Restarted extends Error {}

/** Whether a step's branch was chosen (steps outside any `choose` always hold). Internal. */
export function guardHolds(step: CompiledStep, progress: RunProgress): boolean {
  return (step.guard ?? []).every(
    (g) => (progress.steps[g.step]?.result as { branch?: number | null } | undefined)?.branch === g.arm + 1,
  );
}

/** What `on_error` steps see as `error`. Internal. */
export function errorScope(step: CompiledStep, error: StepProgress['error']): RunScope['error'] {
  return { step: step.index, action: step.action.name, message: error?.message ?? 'failed', code: error?.code };
}

/**
 * A `choose` step: the first branch whose conditions hold, recorded in the run's progress (with
 * the named groups they matched), so a run resumed after a restart takes the same branch.
 * `guarded` runs a condition under the step timeout and the engine's retries. Internal.
 */
export async function chooseBranch(
  step: CompiledStep,
  progress: RunProgress,
  scope: RunScope,
  guarded: (what: string, fn: (signal: AbortSignal) => Promise<ConditionResult>) => Promise<ConditionResult>,
  ctx: Omit<ConditionRunContext, 'scope'>,
): Promise<StepProgress> {
  const t0 = performance.now();
  const branches = step.branches!;
  let arm: number | null = null;
  let seen: ConditionResult | undefined;
  for (let k = 0; k < branches.length && arm === null; k++) {
    const b = branches[k]!;
    if (!b.condition) arm = k;
    else {
      const r = await guarded(b.label, (signal) => b.condition!({ ...ctx, scope, signal }));
      if (r.ok) arm = k;
      seen = r;
    }
  }
  const result = {
    branch: arm === null ? null : arm + 1,
    label: arm === null ? 'no branch' : branches[arm]!.label,
    ...(scope.match ? { match: scope.match } : {}),
    ...(arm === null && seen ? { last: seen } : {}),
  };
  const out: StepProgress = {
    status: 'done',
    sig: step.sig,
    args: null,
    result,
    duration_ms: Math.round(performance.now() - t0),
  };
  progress.steps[step.index] = out;
  return out;
}

/**
 * Mode restart: the run of each rule that is going. `takeOver` stops the one going (at its next
 * step, or in its wait) and waits for it to end; it returns this run's signal (a later event
 * aborts it) and the function to call when this run ends. Internal.
 */
export class Restarts {
  private readonly going = new Map<string, { ac: AbortController; done: Promise<void> }>();

  async takeOver(ruleId: string): Promise<{ signal: AbortSignal; done: () => void }> {
    const prev = this.going.get(ruleId);
    const ac = new AbortController();
    let release!: () => void;
    const finished = new Promise<void>((r) => (release = r));
    this.going.set(ruleId, { ac, done: finished });
    const done = () => {
      if (this.going.get(ruleId)?.ac === ac) this.going.delete(ruleId);
      release();
    };
    if (prev) {
      prev.ac.abort();
      await prev.done;
    }
    return { signal: ac.signal, done };
  }
}
