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
    const x = (i * bw).toFixed(2);
    const width = Math.max(0.5, bw - 0.5).toFixed(2);
    return html`<rect class="${cls}" x="${x}" y="${H - h}" width="${width}" height="${h}"></rect>`;
  };
  const data = html`data-chart="${o.kind}" data-values="${o.total.join(',')}" data-failed="${o.part.join(',')}"`;
  const frame = html`viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${text}"`;
  const axis = html`<line class="axis" x1="0" y1="${H - 0.5}" x2="${W}" y2="${H - 0.5}"></line>`;
  const columns = [...o.total.map((v, i) => bar(v, i, 'bar')), ...o.part.map((v, i) => bar(v, i, 'bar-failed'))];
  return html`<svg class="chart" ${data} ${frame}><title>${text}</title>${axis}${columns}</svg>`;
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
  const values = o.items.map((i) => `${i.name}=${i.count}`).join(',');
  const width = labelW + barW + 40;
  const height = Math.max(h, rowH);
  const cls = o.kind === 'not-run' ? 'bar bar-notrun' : 'bar';
  const row = (it: { name: string; count: number }, i: number) => {
    const len = Math.round((it.count / max) * barW);
    const y = i * rowH;
    const label = html`<text class="label" x="0" y="${y + 12}">${it.name}</text>`;
    const w = Math.max(it.count ? 1 : 0, len);
    const rect = html`<rect class="${cls}" x="${labelW}" y="${y + 3}" width="${w}" height="${rowH - 6}"></rect>`;
    const count = html`<text class="count" x="${labelW + len + 4}" y="${y + 12}">${it.count}${o.unit ?? ''}</text>`;
    return html`${label}${rect}${count}`;
  };
  const frame = html`viewBox="0 0 ${width} ${height}" width="${width}" height="${height}"`;
  const svg = html`<svg class="chart bars" data-chart="${o.kind}" data-values="${values}" ${frame} role="img"`;
  return html`${svg} aria-label="${text}"><title>${text}</title>${o.items.map(row)}</svg>`;
}
