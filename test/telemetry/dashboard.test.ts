import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { METRIC_TABLE } from '../../src/telemetry/metrics.js';

const DASHBOARD = join(import.meta.dirname, '../../docs/grafana-dashboard.json');

interface Panel {
  title: string;
  type: string;
  targets: Array<{ expr: string }>;
}

/** The metric names a PromQL expression reads (label names and functions are not metrics). */
function metricsIn(expr: string): string[] {
  const noLabels = expr.replace(/\{[^}]*\}/g, '');
  return [...noLabels.matchAll(/\b((?:pinbot|process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1]!);
}

/** A series name as its family's: histograms add _bucket, _sum and _count. */
const familyOf = (name: string) => name.replace(/_(bucket|sum|count)$/, '');

describe('docs/grafana-dashboard.json', () => {
  const dash = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
    title: string;
    panels: Panel[];
    templating: { list: Array<{ name: string }> };
  };
  const table = new Map(METRIC_TABLE.map((r) => [r.name, r]));

  it('is a dashboard with a data source and instance variables, every panel with queries', () => {
    expect(dash.title).toBe('pinbot');
    expect(dash.templating.list.map((v) => v.name)).toEqual(['datasource', 'job', 'instance']);
    for (const p of dash.panels) expect(p.targets.length, p.title).toBeGreaterThan(0);
  });

  it('queries only families of the metric table (or Node’s defaults), each the way its type is read', () => {
    const used = new Set<string>();
    for (const p of dash.panels) {
      for (const t of p.targets) {
        for (const name of metricsIn(t.expr)) {
          if (!name.startsWith('pinbot_')) continue;
          const row = table.get(familyOf(name)) ?? table.get(name);
          expect(row, `${p.title}: ${name}`).toBeDefined();
          if (row!.type === 'histogram')
            expect(name, `${p.title}: a histogram is read through its buckets`).toMatch(/_bucket$/);
          if (row!.type === 'counter')
            expect(t.expr, `${p.title}: a counter is read as a rate`).toMatch(
              new RegExp(`(rate|increase)\\(${name}\\b`),
            );
          used.add(row!.name);
        }
      }
    }
    // every family is on the dashboard
    expect([...table.keys()].filter((n) => !used.has(n))).toEqual([]);
  });
});
