import type { RunListener, ScenarioResult } from '../runner.js';

/** Totals of a run. */
export interface Summary {
  total: number;
  passed: number;
  failed: number;
  /** Wall time of the whole run. */
  ms: number;
  parallel: number;
}

/** A report: told as the run goes (live ones print), and given every result at the end. */
export interface Reporter extends RunListener {
  finish(results: ScenarioResult[], summary: Summary): void | Promise<void>;
}

/** Every step of a result, fragments' steps included, in order. */
export function flatSteps(r: ScenarioResult) {
  const out: ScenarioResult['steps'] = [];
  const walk = (list: ScenarioResult['steps']) => list.forEach((s) => (out.push(s), s.children && walk(s.children)));
  walk(r.steps);
  return out;
}

/**
 * What precedes a curl line: an embedded scenario's server stops when the scenario ends, so its
 * curl line is only a record — unless the run kept it (`--keep`).
 */
export function reproduceLabel(r: { mode?: 'embedded' | 'remote'; kept?: { keys: string } | boolean }): string {
  if (r.mode === 'remote') return 'reproduce (keys masked):';
  if (r.kept)
    return (
      `reproduce on the kept server (keys masked: source ` +
      `${typeof r.kept === 'object' ? r.kept.keys : 'the keys file below'}):`
    );
  return 'reproduce (keys masked; this server stopped with the scenario — run with --keep to keep a failed one up):';
}

/** The text of a failed step: message, diff, where, clock, seed, curl. */
export function failureText(r: ScenarioResult, s: ScenarioResult['steps'][number]): string {
  return [
    s.error,
    s.diff,
    `at ${s.where} · scenario clock ${s.clock} · seed ${r.seed}`,
    s.curl ? `${reproduceLabel(r)} ${s.curl}` : undefined,
  ]
    .filter(Boolean)
    .join('\n');
}
