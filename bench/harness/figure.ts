/**
 * One row of the benchmark table. `rps`, `p50` and `p99` are medians over the rounds;
 * `ratio` is the median of the per-round ratios against `baseline`, measured in the same run.
 * Rows that are not throughput figures (startup, bots) put their own quantity in `value` and,
 * for bots, their latencies in `p50`/`p99`.
 */
export interface Figure {
  bench: string;
  name: string;
  rps?: number;
  /** Latency percentiles in ms. */
  p50?: number;
  p99?: number;
  /** Server CPU time per request in µs (median): steadier than req/s on a shared machine. */
  cpuUsPerReq?: number;
  ratio?: number;
  /** What the ratio is against, e.g. `bare express read`. */
  baseline?: string;
  /** The target as written in the issue, e.g. `≥ 0.7×`. */
  target?: string;
  /** Whether the target was met; undefined when the figure has no target. */
  pass?: boolean;
  /** A non-throughput value, e.g. `3.1 s, peak RSS 820 MB`. */
  value?: string;
  /** Anything the reader must know: errors, a missing route, the rounds' spread. */
  note?: string;
}

const num = (n: number | undefined, digits = 0) =>
  n === undefined || !Number.isFinite(n)
    ? ''
    : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const ms = (n: number | undefined) =>
  n === undefined ? '' : Number.isInteger(n) || n >= 100 ? num(n, 0) : n < 10 ? num(n, 2) : num(n, 1);

/** The median of a non-empty list. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** The figure as one line of the table. */
export function figureLine(f: Figure): string {
  const ratio = f.ratio === undefined ? '' : `${num(f.ratio, 2)}×`;
  const result = f.pass === undefined ? (f.target ? 'n/a' : '') : f.pass ? 'ok' : 'MISSED';
  const cells = [
    f.name,
    num(f.rps),
    ms(f.p50),
    ms(f.p99),
    num(f.cpuUsPerReq),
    ratio,
    f.baseline ?? '',
    f.target ?? '',
    result,
    [f.value, f.note].filter(Boolean).join('; '),
  ];
  return `| ${cells.join(' | ')} |`;
}

/** The header of the table (markdown, also readable in a terminal). */
export function tableHeader(): string {
  return [
    '| name | req/s | p50 ms | p99 ms | CPU µs/req | ratio | against | target | result | notes |',
    '| --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- |',
  ].join('\n');
}
