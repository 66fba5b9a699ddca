import type { ConsoleSession } from './access.js';
import { html, type SafeHtml } from './html.js';

const NAV = [
  ['bots', 'Bots'],
  ['users', 'Users'],
  ['clock', 'Clock'],
  ['record', 'Record'],
  ['scenarios', 'Scenarios'],
  ['plugins', 'Plugins'],
] as const;

/** A hidden CSRF field for a form of this session. */
export const csrfField = (s: ConsoleSession) => html`<input type="hidden" name="_csrf" value="${s.csrf}">`;

/**
 * A whole console page: the navigation, the session's one-time note, the content. The CSRF token
 * is in a meta tag for the script; no inline script or style (the CSP forbids both).
 */
export function page(o: {
  title: string;
  section?: string;
  session?: ConsoleSession;
  body: SafeHtml;
  seq?: number;
  liveUser?: string;
}): string {
  const flash = o.session?.flash;
  if (o.session) o.session.flash = undefined;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${
  o.session
    ? html`<meta name="csrf-token" content="${o.session.csrf}"><meta name="live-seq" content="${o.seq ?? 0}">`
    : ''
}${o.session && o.liveUser ? html`<meta name="live-user" content="${o.liveUser}">` : ''}
<title>${o.title} · pinbot console</title>
<link rel="stylesheet" href="/console/assets/console.css">
<script src="/console/assets/console.js" defer></script>
</head>
<body>
<header><strong>pinbot console</strong>
${
  o.session
    ? html`<nav aria-label="Sections">${NAV.map(
        ([k, label]) => html`<a href="/console/${k}"${k === o.section ? html` aria-current="page"` : ''}>${label}</a>`,
      )}</nav>`
    : ''
}
<span id="live-state" role="status" aria-live="polite"></span>
</header>
<main>
${
  flash
    ? html`<p class="flash ${flash.ok ? 'ok' : 'bad'}" role="${flash.ok ? 'status' : 'alert'}">${flash.text}</p>`
    : ''
}
${o.body}
</main>
</body>
</html>
`.text;
}
