import { isAbsolute, relative } from 'node:path';
import type { ReplayedEvent, ReplayedRule, WhatIfReport } from '../runtime/index.js';
import type { ConsoleSession } from './access.js';
import { html, type SafeHtml } from './html.js';
import { csrfField } from './layout.js';

/** What the last what-if of a session found, for the page that shows it. */
export interface WhatIfView {
  bot: string;
  /** The bot file replayed (absolute). */
  file: string;
  /** When it ran (the server's clock, ISO). */
  at: string;
  report?: WhatIfReport;
  /** The file is not a valid bot: its problems (`file:line:col: …`). */
  problems?: string[];
}

/** How many recorded rule runs a what-if of the console replays. */
export const WHAT_IF_LAST = 100;

/** A bot file as the operator names it: from the project folder (else its whole path). Internal. */
export const shownFile = (file: string) => {
  const r = relative(process.cwd(), file);
  return r && !r.startsWith('..') && !isAbsolute(r) ? r : file;
};

/** The What-if button of a bot's page: replays its file as it is on disk. */
export function whatIfForm(name: string, file: string | undefined, s: ConsoleSession): SafeHtml {
  return html`<form method="post" action="/console/bots/${encodeURIComponent(
    name,
  )}/what-if" class="inline what-if-form">${csrfField(s)}<button type="submit">What if?</button> <small>replay ${
    file ? html`<code>${shownFile(file)}</code>` : 'its file'
  } as it is on disk against the last ${WHAT_IF_LAST} decisions, acting on nothing</small></form>`;
}

/** A rule's decision as a cell: runs or why not, the value seen, the steps. Internal. */
function decisionCell(r: ReplayedRule | undefined): SafeHtml {
  if (!r) return html`<td class="decision">—</td>`;
  const runs = r.decision === 'runs';
  return html`<td class="decision ${runs ? 'runs' : 'not-run'}"><strong>${
    runs ? 'runs' : `not run: ${r.decision}`
  }</strong>${r.condition ? html`<br><span class="saw">${r.condition}</span>` : ''}${
    r.steps.length ? html`<ol class="steps">${r.steps.map((x) => html`<li><code>${x}</code></li>`)}</ol>` : ''
  }</td>`;
}

/** One event: its changes, then each rule as recorded and as the edited file decides. Internal. */
function eventItem(e: ReplayedEvent): SafeHtml {
  const mark = e.status === 'changed' ? '≠' : e.status === 'same' ? '=' : '?';
  const words = e.status === 'changed' ? 'changed' : e.status === 'same' ? 'the same' : 'not replayable';
  const rules = [...new Set([...e.after.map((r) => r.rule), ...e.before.map((r) => r.rule)])];
  return html`<li class="what-if-event status-${e.status}" data-event="${e.event}" data-status="${e.status}">
<div><span class="mark" aria-label="${
    words
  }">${mark}</span> <time>${e.at}</time> <strong>${e.summary}</strong> <code>${e.event}</code></div>
${e.changes.length ? html`<ul class="changes">${e.changes.map((c) => html`<li>${c}</li>`)}</ul>` : ''}
${
  e.status === 'not_replayable'
    ? ''
    : html`<table class="before-after"><thead><tr><th scope="col">Rule</th><th scope="col">Recorded</th><th scope="col">With the file on disk</th></tr></thead><tbody>${rules.map(
        (id) =>
          html`<tr data-rule="${id}"><th scope="row">${id}</th>${decisionCell(
            e.before.find((r) => r.rule === id),
          )}${decisionCell(e.after.find((r) => r.rule === id))}</tr>`,
      )}</tbody></table>`
}
</li>`;
}

/** The what-if page of a bot: what replaying its file on disk changes, event by event. */
export function whatIfBody(name: string, view: WhatIfView | undefined, file: string | undefined, s: ConsoleSession) {
  const back = html`<p><a href="/console/bots/${encodeURIComponent(name)}">Back to ${name}</a></p>`;
  if (!view) return html`<h1>What-if: ${name}</h1>${back}${whatIfForm(name, file, s)}`;
  const head = html`<h1>What-if: ${name}</h1>${back}<p>Replayed <code>${shownFile(
    view.file,
  )}</code> as it is on disk at <time>${
    view.at
  }</time> against the decisions the running bot recorded. Nothing was sent or written.</p>${whatIfForm(
    name,
    view.file,
    s,
  )}`;
  if (view.problems)
    return html`${head}<section aria-label="What-if" data-what-if="invalid"><p class="flash bad" role="alert">${shownFile(
      view.file,
    )} is not a valid bot, so it cannot be replayed (the running bot keeps its version): fix it first.</p><ul class="problems">${view.problems.map(
      (p) => html`<li>${p}</li>`,
    )}</ul></section>`;
  const r = view.report!;
  const changed = r.events.filter((e) => e.status !== 'same');
  const same = r.events.filter((e) => e.status === 'same');
  const unknown = r.events.length - same.length - r.changed;
  return html`${head}<section aria-label="What-if" data-what-if="${
    r.changed ? 'changed' : 'same'
  }" data-changed="${r.changed}" data-events="${r.events.length}">
<p class="flash ${r.changed ? 'bad' : 'ok'}" role="status"><strong>${
    r.summary
  }</strong>${unknown ? ` (${unknown} could not be replayed)` : ''}</p>
${changed.length ? html`<ol class="what-if">${changed.map(eventItem)}</ol>` : ''}
${
  same.length
    ? html`<details><summary>${
        same.length === 1 ? '1 decision stays' : `${same.length} decisions stay`
      } the same</summary><ol class="what-if">${same.map(eventItem)}</ol></details>`
    : ''
}
</section>`;
}
