import type { BotStatus, ConditionResult, Trace } from '../runtime/index.js';
import type { ConsoleSession } from './access.js';
import { html, type SafeHtml } from './html.js';
import { bars, columns } from './charts.js';
import { csrfField } from './layout.js';
import type { BotSeries, Health } from './metric-history.js';
import type { DialogView } from '../services/bot-dialogs.js';
import { reasonWords } from './reasons.js';
import { whatIfForm } from './pages-what-if.js';

const STATE_WORDS: Record<BotStatus['status'], string> = {
  running: 'running',
  starting: 'starting',
  waiting: 'waiting',
  failed: 'failed',
  stopped: 'stopped',
  invalid: 'invalid',
  disabled: 'disabled',
  elsewhere: 'running elsewhere',
  paused: 'paused',
};

/** Pause (a running bot) or Resume (a paused one). Internal. */
function pauseForm(b: BotStatus, s: ConsoleSession): SafeHtml | '' {
  if (!b.name) return '';
  const verb =
    b.status === 'paused'
      ? 'resume'
      : ['running', 'starting', 'waiting', 'failed'].includes(b.status)
        ? 'pause'
        : undefined;
  if (!verb) return '';
  return html`<form method="post" action="/console/bots/${encodeURIComponent(b.name)}/${
    verb
  }" class="inline">${csrfField(s)}<button type="submit" aria-label="${
    verb === 'pause' ? 'Pause' : 'Resume'
  } ${b.name}">${verb === 'pause' ? 'Pause' : 'Resume'}</button></form>`;
}

/** The server's health in one line: requests per second, 5xx in the last hour, commit time. */
function healthLine(h: Health): SafeHtml {
  return html`<p class="health" data-health data-rps="${h.rps.toFixed(
    2,
  )}" data-errors="${h.errors}" data-commit-ms="${h.commitMs?.toFixed(2) ?? ''}">
<span>${h.rps < 10 ? h.rps.toFixed(1) : Math.round(h.rps)} requests/s</span>
<span${
    h.errors ? html` class="bad"` : ''
  }>${h.errors} server error${h.errors === 1 ? '' : 's'} (5xx) in the last hour</span>
<span>commit ${
    h.commitMs === undefined ? '—' : `${h.commitMs < 10 ? h.commitMs.toFixed(1) : Math.round(h.commitMs)} ms`
  } (journal + fsync)</span></p>`;
}

/**
 * The bots page: the server's health, every bot file with its state and why, last poll and last
 * run, and its runs charted. */
export function botsBody(
  bots: readonly BotStatus[],
  s: ConsoleSession,
  charts: { health: Health; series: (bot: string, w: 'hour' | 'day') => BotSeries },
): SafeHtml {
  const chart = (b: BotStatus, w: 'hour' | 'day') => {
    if (!b.name) return '';
    const x = charts.series(b.name, w);
    return columns({ label: `${b.name}: runs, last ${w}`, total: x.runs, part: x.failed, kind: `runs-${w}` });
  };
  return html`<h1>Bots</h1>
<section data-live="health" aria-label="Server health">${healthLine(charts.health)}</section>
<section data-live="bots" aria-label="Bots">
${bots.length === 0 ? html`<p>No bots: put bot files in the bots folder (docs/bots.md).</p>` : ''}
<table>
<thead><tr><th scope="col">Bot</th><th scope="col">State</th><th scope="col">Why</th><th scope="col">Last poll</th><th scope="col">Last run</th><th scope="col">Runs, last hour</th><th scope="col">Runs, last day</th></tr></thead>
<tbody>
${bots.map(
  (b) => html`<tr data-bot="${b.name ?? b.file}">
<td>${
    b.name ? html`<a href="/console/bots/${encodeURIComponent(b.name)}">${b.name}</a>` : b.file
  }${b.dry_run ? html` <small>(dry run)</small>` : ''}</td>
<td><span class="state state-${b.status}">${STATE_WORDS[b.status] ?? b.status}</span> ${pauseForm(b, s)}</td>
<td>${b.message ?? ''}${
    b.problems?.length ? html`<ul class="problems">${b.problems.map((p) => html`<li>${p}</li>`)}</ul>` : ''
  }</td>
<td>${b.last_poll ?? '—'}</td>
<td>${b.last_run ?? '—'}</td>
<td>${chart(b, 'hour')}</td>
<td>${chart(b, 'day')}</td>
</tr>`,
)}
</tbody>
</table>
</section>
<form method="post" action="/console/bots/reload">${csrfField(
    s,
  )}<button type="submit">Reload bot files</button></form>`;
}

function conditionTree(c: ConditionResult): SafeHtml {
  return html`<li class="${c.ok ? 'held' : 'failed'}"><span aria-label="${
    c.ok ? 'held' : 'did not hold'
  }">${c.ok ? '✓' : '✗'}</span> ${c.label}${
    c.detail ? html` <span class="saw">(saw ${c.detail})</span>` : ''
  }${c.children?.length ? html`<ul>${c.children.map(conditionTree)}</ul>` : ''}</li>`;
}

const json = (v: unknown) => {
  const t = typeof v === 'string' ? v : JSON.stringify(v);
  return t === undefined ? '' : t.length > 300 ? `${t.slice(0, 299)}…` : t;
};

/** A run's **Make a scenario** link: the YAML of `bots trace NAME --scenario RUN`. Internal. */
function scenarioLink(bot: string, t: Trace, events: readonly string[] | undefined): SafeHtml | '' {
  if (!events?.includes(t.event.type) || !t.event.payload) return '';
  const href = `/console/bots/${encodeURIComponent(bot)}/scenario.yaml?run=${encodeURIComponent(t.event.key)}`;
  return html` <a class="make-scenario" href="${href}" download>Make a scenario</a>`;
}

/** One run of a rule, as the timeline shows it. Internal. */
function traceItem(t: Trace, link: SafeHtml | '' = ''): SafeHtml {
  const why = t.outcome !== 'done' && t.outcome !== 'dry_run' && t.reason ? reasonWords(t.reason) : undefined;
  const label = t.outcome === 'not_run' ? 'NOT RUN' : t.outcome.toUpperCase();
  return html`<li class="run outcome-${t.outcome}" data-rule="${t.rule}">
<div class="run-head"><time>${t.at}</time> <strong>${t.rule}</strong> <span class="event">${t.event.summary}</span>
<span class="outcome">${label}</span>${
    t.outcome === 'done' ? html` <small>${t.duration_ms} ms</small>` : ''
  }${link}</div>
${
  why
    ? html`<p class="reason">${label}: <code>${why.code}</code> — ${why.meaning}${
        t.message && t.reason !== 'condition_false' ? html` (${t.message})` : ''
      }.${why.todo ? html` What to do: ${why.todo}.` : ''}</p>`
    : ''
}
${!why && t.outcome !== 'done' && t.message ? html`<p class="reason">${label}: ${t.message}</p>` : ''}
${t.outcome === 'done' && t.message ? html`<p class="note">${t.message}</p>` : ''}
${t.conditions ? html`<div class="conditions">if<ul>${conditionTree(t.conditions)}</ul></div>` : ''}
${
  t.steps.length
    ? html`<ol class="steps">${t.steps.map(
        (st) =>
          html`<li class="step-${st.status}">${st.action}: ${st.status}${
            st.error
              ? html` — ${st.error}`
              : st.result !== undefined
                ? html` → <code>${json(st.result)}</code>`
                : st.args !== undefined && st.status === 'dry_run'
                  ? html` (would do <code>${json(st.args)}</code>)`
                  : ''
          }</li>`,
      )}</ol>`
    : ''
}
</li>`;
}

/** A bot's charts: event-to-action times and not-run reasons since the server started. Internal. */
function botCharts(o: {
  name: string;
  latency: ReadonlyArray<{ le: string; count: number }>;
  reasons: ReadonlyArray<{ reason: string; count: number }>;
}): SafeHtml {
  const answered = o.latency.reduce((a, b) => a + b.count, 0);
  return html`<section data-live="charts" aria-label="Charts" class="charts">
<figure><figcaption>From event to answer (${answered} answered)</figcaption>${bars({
    label: `${o.name}: time from event to answer`,
    items: o.latency.map((l) => ({ name: l.le, count: l.count })),
    kind: 'latency',
  })}</figure>
<figure><figcaption>Why rules did not run</figcaption>${
    o.reasons.length
      ? bars({
          label: `${o.name}: not run, by reason`,
          items: o.reasons.map((r) => ({ name: r.reason, count: r.count })),
          kind: 'not-run',
        })
      : html`<p>Every rule that was asked ran.</p>`
  }</figure>
</section>`;
}

/** Who is in a dialog with the bot now, each with an End button (`bots.end_dialog`). Internal. */
function dialogsSection(name: string, dialogs: readonly DialogView[] | undefined, s: ConsoleSession): SafeHtml {
  const rows = (dialogs ?? []).map(
    (d) => html`<tr data-dialog="${d.pin}">
<td>${d.person}</td><td>${d.rule}</td><td>${d.question ?? html`<small>step ${d.step + 1}</small>`}</td>
<td><time>${d.since}</time></td><td>${d.until ? html`<time>${d.until}</time>` : '—'}</td>
<td><form method="post" action="/console/bots/${encodeURIComponent(name)}/dialogs/end" class="inline">${csrfField(
      s,
    )}<input type="hidden" name="pin" value="${d.pin}"><input type="hidden" name="conversation" value="${
      d.conversation
    }"><button type="submit" aria-label="End the dialog with ${d.person}">End</button></form></td>
</tr>`,
  );
  return html`<section data-live="dialogs" aria-label="Dialogs"><h2>Dialogs</h2>
${
  dialogs === undefined
    ? html`<p>Not running in this process.</p>`
    : rows.length
      ? html`<table><thead><tr><th scope="col">Person</th><th scope="col">Rule</th><th scope="col">Question</th><th scope="col">Since</th><th scope="col">Until (timeout)</th><th scope="col"></th></tr></thead><tbody>${
          rows
        }</tbody></table>`
      : html`<p>No one is in a dialog with ${name} now.</p>`
}</section>`;
}

/** A bot's page: its state, its charts and the timeline of its runs, newest first, optionally only NOT RUN. */
export function botBody(
  o: {
    name: string;
    status?: BotStatus;
    traces: readonly Trace[];
    onlyNotRun: boolean;
    latency: ReadonlyArray<{ le: string; count: number }>;
    reasons: ReadonlyArray<{ reason: string; count: number }>;
    /** Who is in a dialog with it now (undefined: it does not run here). */
    dialogs?: readonly DialogView[];
    /** The events a run can be made a scenario of (absent: no scenario runner, no button). */
    scenarioEvents?: readonly string[];
  },
  s: ConsoleSession,
): SafeHtml {
  const shown = [...o.traces].reverse().filter((t) => !o.onlyNotRun || t.outcome === 'not_run');
  return html`<h1>Bot ${o.name}</h1>
<section data-live="bot-state" aria-label="State">${
    o.status
      ? html`<p>State: <span class="state state-${o.status.status}">${
          STATE_WORDS[o.status.status]
        }</span> ${o.status.message ?? ''} · last poll ${o.status.last_poll ?? '—'} · last run ${
          o.status.last_run ?? '—'
        } ${pauseForm(o.status, s)}</p>`
      : html`<p>Not running in this process.</p>`
  }</section>
${o.status ? whatIfForm(o.name, o.status.file, s) : ''}
${dialogsSection(o.name, o.dialogs, s)}
${botCharts(o)}
<form method="get" action="/console/bots/${encodeURIComponent(o.name)}" class="filter">
<label><input type="checkbox" name="why" value="1"${
    o.onlyNotRun ? html` checked` : ''
  }> Why didn't it fire? (only rules that did not run)</label>
<button type="submit">Filter</button>
</form>
<section data-live="timeline" aria-label="Runs">
${
  shown.length
    ? html`<ol class="timeline">${shown.map((t) => traceItem(t, scenarioLink(o.name, t, o.scenarioEvents)))}</ol>`
    : html`<p>No runs yet${o.onlyNotRun ? ' that did not fire' : ''}.</p>`
}
</section>`;
}
