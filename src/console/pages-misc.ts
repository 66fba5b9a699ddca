import type { PluginReport } from '../plugin-api/host.js';
import type { ConsoleSession } from './access.js';
import { html, type SafeHtml } from './html.js';
import { csrfField } from './layout.js';

/** A job that ran, as the clock page lists it. */
export interface JobRun {
  name: string;
  at: string;
  ok: boolean;
}

/** The clock page: the time, forms to advance or set a virtual clock, the jobs that fired. */
export function clockBody(o: { now: string; virtual: boolean; jobs: readonly JobRun[] }, s: ConsoleSession): SafeHtml {
  return html`<h1>Clock</h1>
<section data-live="clock" aria-label="Time"><p>Now: <time data-now>${
    o.now
  }</time> ${o.virtual ? '(virtual clock)' : '(real clock)'}</p></section>
${
  o.virtual
    ? html`<div class="forms">
<form method="post" action="/console/clock/advance" class="card">${csrfField(s)}
<label>Advance by <input name="duration" required placeholder="1d" pattern="^(\\d+(ms|s|m|h|d|w))+$"></label>
<button type="submit">Advance</button></form>
<form method="post" action="/console/clock/set" class="card">${csrfField(s)}
<label>Set to <input name="iso" required placeholder="2026-12-01T09:00:00Z"></label>
<button type="submit">Set time</button></form>
</div>`
    : html`<p>This server runs on the real clock; start it with <code>pinbot serve --virtual-clock</code> to move time from here.</p>`
}
<section data-live="jobs" aria-label="Jobs that fired">
<h2>Jobs that fired</h2>
${
  o.jobs.length
    ? html`<ol class="jobs">${[...o.jobs]
        .reverse()
        .map((j) => html`<li><time>${j.at}</time> ${j.name}${j.ok ? '' : ' (failed)'}</li>`)}</ol>`
    : html`<p>None since the console started.</p>`
}
</section>`;
}

/** The record page: start/stop, what was recorded, the scenario YAML and where to save it. */
export function recordBody(
  o: { recording: boolean; count: number; yaml: string; saved?: string },
  s: ConsoleSession,
): SafeHtml {
  return html`<h1>Record a scenario</h1>
<p>While recording, every request you make as a user (and every clock move) is written as a scenario step, with the answer it got as its expectation. Replay it with <code>pinbot scenario run FILE</code>.</p>
<form method="post" action="/console/record/${o.recording ? 'stop' : 'start'}" class="inline">${csrfField(
    s,
  )}<button type="submit">${o.recording ? 'Stop recording' : 'Start recording'}</button></form>
<section data-live="recording" aria-label="Recording">
<p role="status">${o.recording ? 'Recording' : 'Not recording'}: ${o.count} step${o.count === 1 ? '' : 's'}.</p>
${o.count ? html`<pre class="yaml" aria-label="Scenario YAML">${o.yaml}</pre>` : ''}
</section>
${
  o.count
    ? html`<form method="post" action="/console/record/save" class="card">${csrfField(s)}
<label>File name <input name="file" required pattern="[a-z0-9][a-z0-9_\\-]{0,63}" placeholder="my-scenario"></label>
<button type="submit">Save scenario</button></form>
<p><a href="/console/record.yaml" download>Download the YAML</a></p>
<form method="post" action="/console/record/clear" class="inline">${csrfField(
        s,
      )}<button type="submit">Clear the recording</button></form>`
    : ''
}`;
}

/** The plugins page: each plugin's state (running, failed at set-up, quarantined) and entries. */
export function pluginsBody(o: { plugins: readonly PluginReport[]; problems: readonly string[] }): SafeHtml {
  return html`<h1>Plugins</h1>
<section data-live="plugins" aria-label="Plugins">
${
  o.plugins.length === 0
    ? html`<p>No plugins loaded (plugins/*.ts and the packages of config.yaml; docs/plugins.md).</p>`
    : ''
}
<table><thead><tr><th scope="col">Plugin</th><th scope="col">State</th><th scope="col">Why</th><th scope="col">Entries</th></tr></thead><tbody>
${o.plugins.map(
  (p) => html`<tr><td>${p.name ?? '?'} ${p.version ?? ''}<br><small>${
    p.source
  }</small></td><td><span class="state state-${
    p.status
  }">${p.status}</span></td><td>${p.message ?? ''}${p.failures ? html` (${p.failures} failures)` : ''}</td>
<td>${
    p.registers
      ? html`${p.registers.actions.length ? html`actions: ${p.registers.actions.join(', ')}<br>` : ''}${
          p.registers.conditions.length ? html`conditions: ${p.registers.conditions.join(', ')}<br>` : ''
        }${p.registers.triggers.length ? html`triggers: ${p.registers.triggers.join(', ')}` : ''}`
      : ''
  }</td></tr>`,
)}
</tbody></table>
${o.problems.length ? html`<h2>Problems</h2><ul>${o.problems.map((p) => html`<li>${p}</li>`)}</ul>` : ''}
</section>`;
}
