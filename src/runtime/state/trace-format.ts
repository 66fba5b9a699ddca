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

/** An `ask` step as a person reads a dialog: the question, each answer (✓/✗ and why), the outcome. Internal. */
function askLine(s: Trace['steps'][number]): string {
  const args = s.args as { question?: string } | string | undefined;
  const question = typeof args === 'string' ? args : args?.question;
  const r = (s.result ?? {}) as {
    asked?: number;
    answers?: Array<{ text: string; ok: boolean; why?: string }>;
    until?: string;
    save?: string;
    value?: unknown;
    ended?: string;
  };
  const answers = (r.answers ?? []).map(
    (a) => `"${short(a.text, 30)}" ${a.ok ? '✓' : `✗${a.why ? ` (${a.why})` : ''}`}`,
  );
  const asked = r.asked && r.asked > 1 ? ` (asked ${r.asked}×)` : '';
  const parts = [`ask "${short(question ?? '', 50)}"${asked}`];
  if (answers.length) parts.push(`answers: ${answers.join(', ')}`);
  if (s.status === 'waiting') parts.push(`waiting until ${r.until ?? '?'}`);
  else if (s.status === 'failed') parts.push(`${s.error}`);
  else if (r.ended) parts.push(r.ended === 'timeout' ? 'no answer in time' : 'cancelled');
  else if (r.save) parts.push(`answers.${r.save} = ${short(r.value, 40)}`);
  else if ('value' in r) parts.push(`→ ${short(r.value, 40)}`); // a plugin's ctx.ask
  return parts.join(' → ');
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
      ? `done (${t.duration_ms} ms)${t.reason ? `: ${t.reason}` : ''}${t.message ? ` — ${t.message}` : ''}`
      : t.outcome === 'not_run'
        ? `NOT RUN: ${t.reason}${t.message ? ` — ${t.message}` : ''}`
        : `${t.outcome.toUpperCase()}${t.reason ? `: ${t.reason}` : ''}${t.message ? ` — ${t.message}` : ''}`;
  const lines = [`${head}  → ${outcome}${t.resumed ? ' [resumed after a restart]' : ''}`];
  if (t.conditions) lines.push(...conditionLines(t.conditions, 0).map((l) => `      if ${l}`));
  for (const s of t.steps) {
    const mark =
      s.status === 'done'
        ? '✓'
        : s.status === 'dry_run'
          ? '~'
          : s.status === 'failed'
            ? '✗'
            : s.status === 'waiting'
              ? '…'
              : '-';
    const what =
      s.action === 'ask' && s.status !== 'dry_run'
        ? askLine(s)
        : s.status === 'dry_run'
          ? `would ${s.action} ${short(s.args)}`
          : `${s.action}${
              s.status === 'failed' ? `: ${s.error}` : s.result !== undefined ? ` → ${gist(s.result)}` : ''
            }`;
    lines.push(`      do ${mark} ${what}${s.resumed ? ' (before the restart)' : ''}`);
  }
  return lines.join('\n');
}
