import type { ConsoleSession } from './access.js';
import { html, type SafeHtml } from './html.js';
import { csrfField } from './layout.js';
import type { ScenarioRunEnd, ScenarioStepView } from './scenario-port.js';

/** The run the console is showing: which file, its steps so far, how it ended. */
export interface ScenarioRunState {
  file: string;
  steps: ScenarioStepView[];
  end?: ScenarioRunEnd;
}

const MARK = { passed: '✓', failed: '✗', skipped: '-' } as const;

/** `201 · 4 ms`, `skipped: if … is false`: a step's result as the terminal report shows it. Internal. */
function stepInfo(st: ScenarioStepView): string {
  if (st.status === 'skipped') return st.detail ? `skipped: ${st.detail}` : 'skipped';
  return [st.detail, `${st.ms} ms`].filter(Boolean).join(' · ');
}

/** The scenarios page: the project's files with a Run button each, and the last run live. */
export function scenariosBody(
  o: { files: readonly string[] | undefined; run?: ScenarioRunState },
  s: ConsoleSession,
): SafeHtml {
  const r = o.run;
  return html`<h1>Scenarios</h1>
${
  o.files === undefined
    ? html`<p>Running scenarios from the console needs <code>pinbot serve</code>; use <code>npx pinbot scenario run</code>.</p>`
    : o.files.length === 0
      ? html`<p>No scenario files in the scenarios folder (docs/scenarios.md); record one under Record.</p>`
      : html`<ul class="scenario-files">${o.files.map(
          (f) =>
            html`<li><form method="post" action="/console/scenarios/run" class="inline">${csrfField(
              s,
            )}<input type="hidden" name="file" value="${
              f
            }"><button type="submit" aria-label="Run ${f}">Run</button> <code>${f}</code></form></li>`,
        )}</ul>`
}
<section data-live="scenario-run" aria-label="Scenario run">
${
  r
    ? html`<h2>${r.file}: <span class="run-status" role="status">${r.end ? r.end.status : 'running…'}</span></h2>
${r.end?.error ? html`<pre class="failure">${r.end.error}</pre>` : ''}
${r.end?.problems?.length ? html`<ul class="problems">${r.end.problems.map((p) => html`<li>${p}</li>`)}</ul>` : ''}
<ol class="scenario-steps">${r.steps.map(
        (st) => html`<li class="step-${st.status}" data-step="${st.id}"><span aria-label="${
          st.status
        }">${MARK[st.status]}</span> ${st.id} ${st.label} <small>${stepInfo(st)}</small>
${(st.logs ?? []).map((l) => html`<div class="log">log: ${l}</div>`)}
${
  st.status === 'failed'
    ? html`<pre class="failure">${[st.error, st.diff, `at ${st.where} · scenario clock ${st.clock}`]
        .filter(Boolean)
        .join('\n')}</pre>`
    : ''
}</li>`,
      )}</ol>`
    : ''
}
</section>`;
}
