import type { Trace } from './traces.js';
import type { ConditionResult } from '../contract/types.js';

const short = (v: unknown, n = 70): string => {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  if (s === undefined) return '';
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
};

/** The gist of a step result: a status, a message text, or an id. Internal. */
function gist(result: unknown): string {
  if (!result || typeof result !== 'object') return short(result);
  const r = result as Record<string, unknown>;
  const tx = r.transaction as Record<string, unknown> | undefined;
  if (tx?.status) return `${tx.status} ${tx.id ?? ''}`.trim();
  if (typeof r.content === 'string') return `"${short(r.content, 60)}"`;
  if (typeof r.message === 'string' && Object.keys(r).length === 1) return short(r.message);
  if (r.status) return `${r.status}${r.id ? ` ${r.id}` : ''}`;
  if (r.id) return String(r.id);
  return short(r);
}

function conditionLines(c: ConditionResult, depth: number): string[] {
  const pad = '  '.repeat(depth);
  const line = `${pad}${c.ok ? '✓' : '✗'} ${c.label}${c.detail ? `  (${c.detail})` : ''}`;
  return [line, ...(c.children ?? []).flatMap((k) => conditionLines(k, depth + 1))];
}

/**
 * A trace as a person reads it: when, which rule, which event, the outcome (and why not), each
 * condition with what it found, each step with its result or error.
 *
 * @example console.log(formatTrace(trace))
 */
export function formatTrace(t: Trace): string {
  const head = `${t.at}  ${t.bot} › ${t.rule}  ${t.event.summary}`;
  const outcome =
    t.outcome === 'done'
      ? `done (${t.duration_ms} ms)${t.message ? ` — ${t.message}` : ''}`
      : t.outcome === 'not_run'
        ? `NOT RUN: ${t.reason}${t.message ? ` — ${t.message}` : ''}`
        : `${t.outcome.toUpperCase()}${t.reason ? `: ${t.reason}` : ''}${t.message ? ` — ${t.message}` : ''}`;
  const lines = [`${head}  → ${outcome}${t.resumed ? ' [resumed after a restart]' : ''}`];
  if (t.conditions) lines.push(...conditionLines(t.conditions, 0).map((l) => `      if ${l}`));
  for (const s of t.steps) {
    const mark = s.status === 'done' ? '✓' : s.status === 'dry_run' ? '~' : s.status === 'failed' ? '✗' : '-';
    const what = s.status === 'dry_run' ? `would ${s.action} ${short(s.args)}` : `${s.action}${s.status === 'failed' ? `: ${s.error}` : s.result !== undefined ? ` → ${gist(s.result)}` : ''}`;
    lines.push(`      do ${mark} ${what}${s.resumed ? ' (before the restart)' : ''}`);
  }
  return lines.join('\n');
}
