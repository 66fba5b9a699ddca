/**
 * Label-keyed counters, gauges and histograms that cost a map lookup and an add to record, and
 * that prom-client prints (`registry.registerMetric` takes any object with `name`, `type` and
 * `get()`). prom-client's own `inc()`/`observe()` hash their labels on every call (≈ 1.5 µs a
 * request counter and histogram on the bench machine); these keep one cell per label set, and
 * callers on a hot path keep the cell itself, so recording is an add and a short bucket search.
 *
 * A family holds at most `MAX_CELLS` label sets: past that, new label sets share one cell whose
 * labels all read `_overflow` (docs/operations.md "Monitoring": the bound). Internal to
 * telemetry/.
 */

/** The most label sets one family keeps. */
export const MAX_CELLS = 5000;
const OVERFLOW = '_overflow';

/** What prom-client's registry reads from a metric. */
export interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}
export interface CollectedMetric {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  values: MetricValue[];
  aggregator: 'sum';
}

/** One counter of a label set. */
export interface CounterCell {
  readonly labels: readonly string[];
  value: number;
}

/** One histogram of a label set: counts per bucket (not cumulative), sum and count. */
export interface HistogramCell {
  readonly labels: readonly string[];
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/** The cells of a family by label set, bounded. Internal. */
abstract class Family<C extends { labels: readonly string[] }> {
  protected readonly cells = new Map<string, C>();
  readonly aggregator = 'sum' as const;

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  protected abstract make(labels: readonly string[]): C;

  /** The cell of these label values (in `labelNames` order). */
  cell(...values: string[]): C {
    const key = values.length === 1 ? values[0]! : values.join('\u0000');
    let c = this.cells.get(key);
    if (c) return c;
    if (this.cells.size >= MAX_CELLS) return this.overflow();
    c = this.make(values);
    this.cells.set(key, c);
    return c;
  }

  /** The one cell past the bound (made past it too). Internal. */
  private overflow(): C {
    const values = this.labelNames.map(() => OVERFLOW);
    const key = values.join('\u0000');
    let c = this.cells.get(key);
    if (!c) this.cells.set(key, (c = this.make(values)));
    return c;
  }

  /** Every cell (the console's charts read them). */
  all(): IterableIterator<C> {
    return this.cells.values();
  }

  protected labelsOf(values: readonly string[]): Record<string, string> {
    const out: Record<string, string> = {};
    this.labelNames.forEach((n, i) => (out[n] = values[i]!));
    return out;
  }
}

/** A counter family. */
export class CounterFamily extends Family<CounterCell> {
  readonly type = 'counter' as const;

  protected make(labels: readonly string[]): CounterCell {
    return { labels, value: 0 };
  }

  /** Adds `n` (default 1) to the cell of these label values. */
  inc(values: string[], n = 1): void {
    this.cell(...values).value += n;
  }

  /** The sum over cells whose labels pass `where` (label name → value). */
  sum(where: Record<string, string> = {}): number {
    let s = 0;
    const idx = Object.entries(where).map(([k, v]) => [this.labelNames.indexOf(k), v] as const);
    for (const c of this.cells.values()) if (idx.every(([i, v]) => c.labels[i] === v)) s += c.value;
    return s;
  }

  get(): CollectedMetric {
    const values = [...this.cells.values()].map((c) => ({ labels: this.labelsOf(c.labels), value: c.value }));
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' };
  }
}

/** A gauge family whose values are read when scraped. */
export class GaugeFamily {
  readonly type = 'gauge' as const;
  readonly aggregator = 'sum' as const;
  private readonly sources = new Set<() => Array<{ labels: Record<string, string>; value: number }>>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  /** Adds a reader of current values (a store's journal size); returns its removal. */
  source(read: () => Array<{ labels: Record<string, string>; value: number }>): () => void {
    this.sources.add(read);
    return () => void this.sources.delete(read);
  }

  /** The current values; readers of one label set (two stores in one process) are summed. */
  get(): CollectedMetric {
    const byLabels = new Map<string, MetricValue>();
    for (const read of this.sources) {
      try {
        for (const v of read()) {
          const key = JSON.stringify(v.labels);
          const seen = byLabels.get(key);
          if (seen) seen.value += v.value;
          else byLabels.set(key, { labels: v.labels, value: v.value });
        }
      } catch {
        // a reader that fails shows nothing this scrape
      }
    }
    return { name: this.name, help: this.help, type: this.type, values: [...byLabels.values()], aggregator: 'sum' };
  }
}

/** A histogram family with fixed bucket bounds (seconds). */
export class HistogramFamily extends Family<HistogramCell> {
  readonly type = 'histogram' as const;

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    readonly buckets: readonly number[],
  ) {
    super(name, help, labelNames);
  }

  protected make(labels: readonly string[]): HistogramCell {
    return { labels, counts: new Float64Array(this.buckets.length + 1), sum: 0, count: 0 };
  }

  /** Records `v` in `cell` (kept by a caller on a hot path). */
  observeIn(cell: HistogramCell, v: number): void {
    const b = this.buckets;
    let i = 0;
    while (i < b.length && v > b[i]!) i++;
    cell.counts[i]!++;
    cell.sum += v;
    cell.count++;
  }

  observe(values: string[], v: number): void {
    this.observeIn(this.cell(...values), v);
  }

  get(): CollectedMetric {
    const values: MetricValue[] = [];
    for (const c of this.cells.values()) {
      const labels = this.labelsOf(c.labels);
      let acc = 0;
      this.buckets.forEach((le, i) => {
        acc += c.counts[i]!;
        values.push({ labels: { ...labels, le }, value: acc, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { ...labels, le: '+Inf' }, value: c.count, metricName: `${this.name}_bucket` });
      values.push({ labels, value: c.sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: c.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' };
  }
}
