// pinbot console: live updates. The server sends "change" events (server-sent events); the page
// fetches itself again and swaps in its live parts ([data-live]). Markup comes escaped from the
// server; nothing here evaluates text.
(() => {
  'use strict';
  const state = document.getElementById('live-state');
  if (!document.querySelector('meta[name="csrf-token"]') || !window.EventSource) return;
  const seqOf = (doc) => Number(doc.querySelector('meta[name="live-seq"]')?.content ?? -1);
  let shown = seqOf(document);
  let busy = false;
  let again = false;
  async function refresh() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    try {
      const res = await fetch(location.href, { headers: { 'X-Console-Live': '1' }, credentials: 'same-origin' });
      if (res.ok) {
        const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
        shown = seqOf(doc);
        for (const el of document.querySelectorAll('[data-live]')) {
          const next = doc.querySelector('[data-live="' + CSS.escape(el.dataset.live) + '"]');
          if (next && next.innerHTML !== el.innerHTML) el.replaceWith(document.importNode(next, true));
        }
      }
    } catch {
      // the next change tries again
    } finally {
      busy = false;
      if (again) {
        again = false;
        void refresh();
      }
    }
  }
  // a user's page hears only of that user's changes (at most one a second, the server paces them)
  const user = document.querySelector('meta[name="live-user"]')?.content;
  const events = new EventSource('/console/events' + (user ? '?user=' + encodeURIComponent(user) : ''));
  events.addEventListener('change', () => void refresh());
  // changes made between rendering this page and connecting: the server says how many went out
  events.addEventListener('hello', (e) => {
    if (JSON.parse(e.data).seq !== shown) void refresh();
  });
  events.addEventListener('open', () => {
    if (state) state.textContent = 'live';
  });
  events.addEventListener('error', () => {
    if (state) state.textContent = 'reconnecting…';
  });
})();
