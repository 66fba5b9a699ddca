/**
 * Small charts as inline SVG: no script, no external asset, no style attribute (the console's
 * CSP allows none of these), colours from console.css by class. Each chart carries its numbers
 * in `data-values` and a text equivalent in its `<title>` and `aria-label`.
 */
import { html, type SafeHtml } from './html.js';

const W = 120;
const H = 28;

/**
 * Columns over time: `total` per bin (grey) with `part` of it (red: failures) drawn over it.
 *
 * @example columns({ label: 'runs, last hour', total: [0, 2, 1], part: [0, 1, 0], kind: 'runs-hour' })
 */
export function columns(o: {
  label: string;
  total: readonly number[];
  part: readonly number[];
  kind: string;
}): SafeHtml {
  const max = Math.max(1, ...o.total);
  const bw = W / o.total.length;
  const sum = o.total.reduce((a, b) => a + b, 0);
  const failed = o.part.reduce((a, b) => a + b, 0);
  const text = `${o.label}: ${sum} run${sum === 1 ? '' : 's'}, ${failed} failed`;
  const bar = (v: number, i: number, cls: string) => {
    if (v <= 0) return '';
    const h = Math.max(1, Math.round((v / max) * (H - 2)));
    return html`<rect class="${cls}" x="${(i * bw).toFixed(
      2,
    )}" y="${H - h}" width="${Math.max(0.5, bw - 0.5).toFixed(2)}" height="${h}"></rect>`;
  };
  return html`<svg class="chart" data-chart="${o.kind}" data-values="${o.total.join(',')}" data-failed="${o.part.join(
    ',',
  )}" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${text}"><title>${
    text
  }</title><line class="axis" x1="0" y1="${H - 0.5}" x2="${W}" y2="${H - 0.5}"></line>${o.total.map((v, i) =>
    bar(v, i, 'bar'),
  )}${o.part.map((v, i) => bar(v, i, 'bar-failed'))}</svg>`;
}

/**
 * Horizontal bars, one per labelled count (not-run reasons, latency buckets), longest first
 * as given.
 */
export function bars(o: {
  label: string;
  items: ReadonlyArray<{ name: string; count: number }>;
  kind: string;
  unit?: string;
}): SafeHtml {
  const max = Math.max(1, ...o.items.map((i) => i.count));
  const rowH = 16;
  const labelW = 130;
  const barW = 220;
  const h = rowH * o.items.length;
  const text = `${o.label}: ${o.items.map((i) => `${i.name} ${i.count}`).join(', ') || 'none'}`;
  return html`<svg class="chart bars" data-chart="${o.kind}" data-values="${o.items
    .map((i) => `${i.name}=${i.count}`)
    .join(',')}" viewBox="0 0 ${labelW + barW + 40} ${Math.max(h, rowH)}" width="${
    labelW + barW + 40
  }" height="${Math.max(h, rowH)}" role="img" aria-label="${text}"><title>${text}</title>${o.items.map(
    (it, i) =>
      html`<text class="label" x="0" y="${i * rowH + 12}">${it.name}</text><rect class="bar${
        o.kind === 'not-run' ? ' bar-notrun' : ''
      }" x="${labelW}" y="${i * rowH + 3}" width="${Math.max(
        it.count ? 1 : 0,
        Math.round((it.count / max) * barW),
      )}" height="${rowH - 6}"></rect><text class="count" x="${
        labelW + Math.round((it.count / max) * barW) + 4
      }" y="${i * rowH + 12}">${it.count}${o.unit ?? ''}</text>`,
  )}</svg>`;
}
