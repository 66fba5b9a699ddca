import type { CoverageReport, Ratio } from './report.js';

/** The measures `--coverage-min` gates, by the names it accepts. */
export const COVERAGE_KINDS = {
  operations: 'API operations called',
  rules: 'bot rules that ran',
  outcomes: 'branches and step outcomes taken',
  lines: 'bot lines exercised',
} as const;
export type CoverageKind = keyof typeof COVERAGE_KINDS;
const ALIASES: Record<string, CoverageKind> = {
  api: 'operations',
  operations: 'operations',
  rules: 'rules',
  branches: 'outcomes',
  outcomes: 'outcomes',
  lines: 'lines',
};

/**
 * `--coverage-min 80` (every measure) or `--coverage-min rules=100` (one; repeatable) → the
 * minimum percent of each measure; a clear error for anything else.
 */
export function parseCoverageMin(specs: string[]): Partial<Record<CoverageKind, number>> {
  const out: Partial<Record<CoverageKind, number>> = {};
  // a bare percent applies to every measure; MEASURE=PERCENT wins over it, in whatever order
  const ordered = [...specs].sort((a, b) => Number(a.includes('=')) - Number(b.includes('=')));
  for (const spec of ordered) {
    const m = /^(?:([a-z]+)=)?(\d+(?:\.\d+)?)%?$/.exec(spec.trim());
    const kind = m?.[1] === undefined ? undefined : ALIASES[m[1]];
    const n = Number(m?.[2]);
    if (!m || (m[1] !== undefined && !kind) || n > 100) {
      throw new Error(
        `--coverage-min ${spec}: expected a percent (80: every measure) or ` +
          `MEASURE=PERCENT (rules=100), MEASURE one of ` +
          `${Object.keys(ALIASES).join(', ')}`,
      );
    }
    for (const k of kind ? [kind] : (Object.keys(COVERAGE_KINDS) as CoverageKind[])) out[k] = n;
  }
  return out;
}

/** The measures below their minimum, one line each (empty: the gate passes). */
export function belowMinimum(report: CoverageReport, min: Partial<Record<CoverageKind, number>>): string[] {
  return (Object.entries(min) as Array<[CoverageKind, number]>)
    .filter(([k, n]) => report.totals[k].total > 0 && report.totals[k].percent < n)
    .map(([k, n]) => `${COVERAGE_KINDS[k]}: ${report.totals[k].percent}% is below --coverage-min ${k}=${n}`);
}

const pct = (r: Ratio) => (r.total ? `${r.covered} of ${r.total} (${r.percent}%)` : 'none to take');
const counts = (o: Record<string, number>) =>
  Object.entries(o)
    .map(([k, n]) => `${k} ×${n}`)
    .join(', ');

/** Consecutive lines of one file as ranges: `bots/a.yaml:3-5, 9`. Internal. */
function lineRanges(missed: Array<{ where: string }>): string {
  const nums = missed.map((m) => Number(m.where.slice(m.where.lastIndexOf(':') + 1)));
  const parts: string[] = [];
  for (let i = 0; i < nums.length; i++) {
    let j = i;
    while (j + 1 < nums.length && nums[j + 1] === nums[j]! + 1) j++;
    parts.push(i === j ? `${nums[i]}` : `${nums[i]}-${nums[j]}`);
    i = j;
  }
  return parts.join(', ');
}

/** The terminal summary: the four measures, then what was never exercised, with `file:line`. */
export function coverageSummary(r: CoverageReport): string {
  const out = [`coverage of ${r.scenarios} scenario run${r.scenarios === 1 ? '' : 's'}`];
  out.push(`  API operations called      ${pct(r.totals.operations)}`);
  out.push(`  bot rules that ran         ${pct(r.totals.rules)}`);
  out.push(`  branches/outcomes taken    ${pct(r.totals.outcomes)}`);
  out.push(`  bot lines exercised        ${pct(r.totals.lines)}`);
  const never = r.api.operations.filter((o) => o.calls === 0).map((o) => o.operation);
  if (never.length) out.push(`  never called: ${never.join(', ')}`);
  for (const b of r.bots) {
    out.push(`  bot ${b.name} (${b.file})`);
    for (const rule of b.rules) {
      const why = Object.keys(rule.not_run).length ? ` · not run: ${counts(rule.not_run)}` : '';
      out.push(
        `    ${rule.ran ? '✓' : '✗'} rule ${rule.id}  triggered ${rule.triggered} · ` +
          `ran ${rule.ran}${why}  ${rule.where}`,
      );
    }
    for (const o of b.outcomes.filter((x) => !x.taken))
      out.push(`    ✗ ${o.action} of rule ${o.rule} (step ${o.step}): ${o.outcome} never taken  ${o.where}`);
    if (b.lines.missed.length) out.push(`    lines never exercised: ${b.file}:${lineRanges(b.lines.missed)}`);
  }
  return out.join('\n');
}

const esc = (s: unknown) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const bar = (r: Ratio) => `<div class="bar"><span style="width:${r.percent}%"></span></div>`;

/** The HTML page: one file, no external assets (styles inline, no scripts), readable offline. */
export function coverageHtml(r: CoverageReport, title = 'pinbot scenario coverage'): string {
  const total = (name: string, ratio: Ratio, id: string) =>
    `<div class="total" id="total-${id}"><h2>${esc(
      name,
    )}</h2><p><b>${ratio.percent}%</b> · ${ratio.covered} of ${ratio.total}</p>${bar(ratio)}</div>`;
  const ops = r.api.operations
    .map(
      (o) =>
        `<tr class="${o.calls ? 'hit' : 'miss'}"><td><code>${esc(o.operation)}</code></td><td>${
          o.calls
        }</td><td>${o.by_steps}</td><td>${esc(counts(o.statuses)) || '—'}</td><td>${
          esc(counts(o.codes)) || '—'
        }</td><td>${esc(o.never_produced.join(' ')) || '—'}</td></tr>`,
    )
    .join('\n');
  const bots = r.bots
    .map((b) => {
      const rules = b.rules
        .map(
          (x) =>
            `<tr class="${x.ran ? 'hit' : 'miss'}"><td><code>${esc(x.id)}</code></td><td>${
              x.triggered
            }</td><td>${x.ran}</td><td>${esc(counts(x.not_run)) || '—'}</td><td><code>${esc(x.where)}</code></td></tr>`,
        )
        .join('\n');
      const outs = b.outcomes
        .map(
          (o) =>
            `<tr class="${o.taken ? 'hit' : 'miss'}"><td><code>${esc(o.rule)}</code> ` +
            `step ${o.step} <code>${esc(o.action)}</code></td><td>${esc(
              o.outcome,
            )}</td><td>${o.taken}</td><td><code>${esc(o.where)}</code></td></tr>`,
        )
        .join('\n');
      const missed = b.lines.missed
        .map((m) => `<li><code>${esc(m.where)}</code> <code class="src">${esc(m.text)}</code></li>`)
        .join('\n');
      return `<section class="bot"><h3>bot ${esc(b.name)} <small>${esc(b.file)}</small></h3>
<table><thead><tr><th>rule</th><th>triggered</th><th>ran</th><th>not run (why)</th><th>where</th></tr></thead><tbody>${
        rules
      }</tbody></table>
${
  outs
    ? `<table><thead><tr><th>step</th><th>branch / ` +
      `outcome</th><th>taken</th><th>where</th></tr></thead><tbody>${outs}</tbody></table>`
    : ''
}
<p>lines exercised: ${b.lines.covered} of ${b.lines.total}</p>${
        missed
          ? `<details open><summary>lines never exercised ` +
            `(${b.lines.missed.length})</summary><ul class="missed">${missed}</ul></details>`
          : ''
      }</section>`;
    })
    .join('\n');
  const unmatched = Object.entries(r.api.unmatched)
    .map(([k, n]) => `<li><code>${esc(k)}</code> ×${n}</li>`)
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1d1d1f;background:#fff}
h1{font-size:1.4rem}h2{font-size:1rem;margin:0}h3{margin-top:2rem}small{color:#666;font-weight:normal}
.totals{display:flex;gap:1rem;flex-wrap:wrap}.total{border:1px solid #ddd;border-radius:8px;padding:.75rem 1rem;min-width:12rem}
.bar{height:6px;background:#f2d0d0;border-radius:3px}.bar span{display:block;height:6px;background:#2e8540;border-radius:3px}
table{border-collapse:collapse;margin:.75rem 0;width:100%}th,td{border-bottom:1px solid #eee;padding:.3rem .5rem;text-align:left;vertical-align:top}
tr.miss td:first-child{border-left:4px solid #c62828}tr.hit td:first-child{border-left:4px solid #2e8540}
code{font:12px ui-monospace,monospace}.missed{columns:2}.src{color:#555}
@media (prefers-color-scheme:dark){body{background:#111;color:#eee}th,td{border-color:#333}.total{border-color:#333}.src{color:#aaa}}
</style></head><body>
<h1>${esc(title)}</h1><p>${r.scenarios} scenario run${r.scenarios === 1 ? '' : 's'}</p>
<div class="totals">${total('API operations called', r.totals.operations, 'operations')}${total(
    'bot rules that ran',
    r.totals.rules,
    'rules',
  )}${total(
    'branches and outcomes taken',
    r.totals.outcomes,
    'outcomes',
  )}${total('bot lines exercised', r.totals.lines, 'lines')}</div>
<h2 style="margin-top:2rem">API operations</h2>
<table id="operations"><thead><tr><th>operation</th><th>calls</th><th>by steps</th><th>statuses seen</th><th>error codes seen</th><th>documented, never produced</th></tr></thead><tbody>
${ops}
</tbody></table>
${unmatched ? `<details><summary>requests that match no operation</summary><ul>${unmatched}</ul></details>` : ''}
<h2 style="margin-top:2rem">Bots</h2>
${bots || '<p>No bots were loaded by these scenarios.</p>'}
</body></html>
`;
}
