import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { isNode, LineCounter, parseDocument, type Document } from 'yaml';
import type { LoadedScenario } from '../load.js';
import { openapiDocument } from '../openapi-schemas.js';
import type { ScenarioResult } from '../runner.js';
import type { RuleCounts, ScenarioCoverage } from './collect.js';

/** One API operation over a run: calls by status and error code, and what it documents. */
export interface OperationCoverage {
  /** `POST /wallet/send` (the path as the docs write it, without /api/v1). */
  operation: string;
  calls: number;
  /** Calls made by the scenarios' steps (the rest by bots). */
  by_steps: number;
  statuses: Record<string, number>;
  codes: Record<string, number>;
  /** Documented statuses the run never produced. */
  never_produced: string[];
  /** Statuses produced that the document does not list. */
  undocumented: string[];
}

/** One outcome of a step: a `choose` branch, or an outcome a step kind reports (an `ask`'s `timeout`). */
export interface OutcomeCoverage {
  rule: string;
  step: number;
  action: string;
  outcome: string;
  /** `file:line` of the branch (or of the step). */
  where: string;
  taken: number;
}

export interface RuleCoverage {
  id: string;
  where: string;
  triggered: number;
  ran: number;
  /** Why it did not run → count. */
  not_run: Record<string, number>;
}

export interface BotCoverage {
  name: string;
  file: string;
  rules: RuleCoverage[];
  outcomes: OutcomeCoverage[];
  lines: { total: number; covered: number; missed: Array<{ where: string; text: string }> };
}

/** A ratio of what was exercised. */
export interface Ratio {
  covered: number;
  total: number;
  percent: number;
}

/** Everything `--coverage` reports (its JSON form). */
export interface CoverageReport {
  scenarios: number;
  totals: { operations: Ratio; rules: Ratio; outcomes: Ratio; lines: Ratio };
  api: { operations: OperationCoverage[]; unmatched: Record<string, number> };
  bots: BotCoverage[];
}

const ratio = (covered: number, total: number): Ratio => ({
  covered,
  total,
  percent: total ? Math.floor((covered / total) * 1000) / 10 : 100,
});

/**
 * Outcomes each step kind can have, for coverage to list the ones never seen. A step kind
 * reports which one a run had in its trace result (`outcome`, or a `choose` step's `label`,
 * see collect.ts). An `ask` reports `answered` (valid at the first question), `re-asked` (a
 * retry was sent), `timeout` or `cancel`.
 */
export const STEP_OUTCOMES: Record<string, (args: unknown) => string[]> = {
  choose: (args) => {
    const items = Array.isArray(args) ? (args as Array<{ else?: unknown }>) : [];
    const labels = items.map((it, k) => (it && typeof it === 'object' && 'else' in it ? 'else' : `branch ${k + 1}`));
    return labels.includes('else') ? labels : [...labels, 'no branch'];
  },
  ask: () => ['answered', 're-asked', 'timeout', 'cancel'],
};

/**
 * The coverage of a run: each operation of the API's OpenAPI document × the statuses and error
 * codes seen; each rule of the bots the scenarios loaded × triggered / ran / why not; each
 * `choose` branch (and step outcome); the lines of the bots' rules never exercised.
 */
export function coverageReport(
  scenarios: LoadedScenario[],
  results: ScenarioResult[],
  cwd = process.cwd(),
): CoverageReport {
  const api = apiCoverage(results.map((r) => r.coverage).filter((c): c is ScenarioCoverage => !!c));
  const bots = botsCoverage(scenarios, results, cwd);
  const sum = (f: (b: BotCoverage) => [number, number]): [number, number] =>
    bots.reduce<[number, number]>((a, b) => [a[0] + f(b)[0], a[1] + f(b)[1]], [0, 0]);
  const [rc, rt] = sum((b) => [b.rules.filter((r) => r.ran > 0).length, b.rules.length]);
  const [oc, ot] = sum((b) => [b.outcomes.filter((o) => o.taken > 0).length, b.outcomes.length]);
  const [lc, lt] = sum((b) => [b.lines.covered, b.lines.total]);
  return {
    scenarios: results.length,
    totals: {
      operations: ratio(api.operations.filter((o) => o.calls > 0).length, api.operations.length),
      rules: ratio(rc, rt),
      outcomes: ratio(oc, ot),
      lines: ratio(lc, lt),
    },
    api,
    bots,
  };
}

/** Requests → operations of the document. Internal. */
function apiCoverage(covs: ScenarioCoverage[]): CoverageReport['api'] {
  const doc = openapiDocument({});
  const ops: Array<OperationCoverage & { method: string; re: RegExp }> = [];
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, { responses: object }>>)) {
    for (const [method, op] of Object.entries(methods)) {
      const re = new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`);
      ops.push({
        operation: `${method.toUpperCase()} ${path.replace(/^\/api\/v1/, '')}`,
        method: method.toUpperCase(),
        re,
        calls: 0,
        by_steps: 0,
        statuses: {},
        codes: {},
        never_produced: Object.keys(op.responses),
        undocumented: [],
      });
    }
  }
  const unmatched: Record<string, number> = {};
  for (const c of covs) {
    for (const [key, n] of Object.entries(c.requests)) {
      const [method, path, status, code, by] = key.split(' ') as [string, string, string, string, string];
      const op = ops.find((o) => o.method === method && o.re.test(path));
      if (!op) {
        const k = `${method} ${path} ${status}`;
        unmatched[k] = (unmatched[k] ?? 0) + n;
        continue;
      }
      op.calls += n;
      if (by === 'steps') op.by_steps += n;
      op.statuses[status] = (op.statuses[status] ?? 0) + n;
      if (code !== '-') op.codes[code] = (op.codes[code] ?? 0) + n;
    }
  }
  return {
    operations: ops.map(({ method: _m, re: _r, ...o }) => ({
      ...o,
      undocumented: Object.keys(o.statuses).filter((s) => !o.never_produced.includes(s)),
      never_produced: o.never_produced.filter((s) => !(s in o.statuses)),
    })),
    unmatched,
  };
}

/** A step of a rule as compiled (the loader's order: choose branches after their step, then on_error). Internal. */
interface StepPlace {
  index: number;
  action: string;
  args: unknown;
  path: Array<string | number>;
}

/** Mirrors runtime/define/loader.ts compileSteps: each step's index and its path in the file. Internal. */
function stepPlaces(rule: Record<string, unknown>, base: Array<string | number>): StepPlace[] {
  const out: StepPlace[] = [];
  const add = (list: unknown, at: Array<string | number>) => {
    if (!Array.isArray(list)) return;
    list.forEach((step, j) => {
      const keys =
        step && typeof step === 'object' ? Object.keys(step).filter((k) => k !== 'continue_on_error') : [String(step)];
      const action = keys[0] ?? '';
      const args = step && typeof step === 'object' ? (step as Record<string, unknown>)[action] : undefined;
      const path = [...at, j];
      out.push({ index: out.length, action, args, path });
      if (action === 'choose' && Array.isArray(args)) {
        args.forEach((it: Record<string, unknown>, k) =>
          it && 'else' in it ? add(it.else, [...path, 'choose', k, 'else']) : add(it?.do, [...path, 'choose', k, 'do']),
        );
      }
    });
  };
  add(rule.do, [...base, 'do']);
  add(rule.on_error, [...base, 'on_error']);
  return out;
}

/** The bots of the scenarios, once each, with the counts of every run merged. Internal. */
function botsCoverage(scenarios: LoadedScenario[], results: ScenarioResult[], cwd: string): BotCoverage[] {
  const byFile = new Map<string, LoadedScenario>(scenarios.map((s) => [s.file, s]));
  const bots = new Map<
    string,
    { name: string; source: string; at: Array<string | number>; counts: Array<Record<string, RuleCounts>> }
  >();
  for (const sc of scenarios) {
    for (const b of sc.bots) {
      if (!b.name || !b.source) continue;
      const key = `${b.source}\u0000${JSON.stringify(b.at ?? [])}`;
      if (!bots.has(key)) bots.set(key, { name: b.name, source: b.source, at: b.at ?? [], counts: [] });
    }
  }
  for (const r of results) {
    const sc = byFile.get(r.file);
    for (const b of sc?.bots ?? []) {
      const entry = bots.get(`${b.source}\u0000${JSON.stringify(b.at ?? [])}`);
      const c = r.coverage?.bots[b.name ?? ''];
      if (entry && c) entry.counts.push(c);
    }
  }
  return [...bots.values()].map((b) => botCoverage(b, cwd));
}

/** One bot's rules, outcomes and lines. Internal. */
function botCoverage(
  b: { name: string; source: string; at: Array<string | number>; counts: Array<Record<string, RuleCounts>> },
  cwd: string,
): BotCoverage {
  const text = readFileSync(b.source, 'utf8');
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc });
  const file = relative(cwd, b.source) || b.source;
  const lineOf = (path: Array<string | number>) => {
    const n = doc.getIn(path, true);
    return isNode(n) && n.range ? lc.linePos(n.range[0]).line : 0;
  };
  const where = (path: Array<string | number>) => `${file}:${lineOf(path)}`;
  const spec = (b.at.length ? doc.getIn(b.at) : doc.toJS()) as { rules?: Array<Record<string, unknown>> } | undefined;
  const rules: RuleCoverage[] = [];
  const outcomes: OutcomeCoverage[] = [];
  // line → what exercises it (a rule's trigger, or a step), later entries nested in earlier ones
  const owner = new Map<number, string>();
  const exercised = new Set<string>();
  const lines = text.split('\n');
  const own = (path: Array<string | number>, id: string) => {
    for (const l of linesOf(doc, lc, path))
      if (lines[l - 1]?.trim() && !lines[l - 1]!.trim().startsWith('#')) owner.set(l, id);
  };
  (spec?.rules ?? []).forEach((rule, i) => {
    const id = typeof rule.id === 'string' ? rule.id : `rule-${i + 1}`;
    const base = [...b.at, 'rules', i];
    const merged = mergeCounts(b.counts.map((c) => c[id]).filter((c): c is RuleCounts => !!c));
    rules.push({ id, where: where(base), triggered: merged.triggered, ran: merged.ran, not_run: merged.not_run });
    own(base, `rule ${i}`);
    if (merged.triggered) exercised.add(`rule ${i}`);
    for (const st of stepPlaces(rule, base)) {
      const seen = merged.steps[String(st.index)];
      own(st.path, `step ${i} ${st.index}`);
      if (seen && Object.keys(seen.status).some((s) => s !== 'skipped')) exercised.add(`step ${i} ${st.index}`);
      const declared = STEP_OUTCOMES[st.action]?.(st.args) ?? [];
      declared.forEach((outcome, k) => {
        const armPath = st.action === 'choose' && outcome !== 'no branch' ? [...st.path, 'choose', k] : st.path;
        outcomes.push({
          rule: id,
          step: st.index,
          action: st.action,
          outcome,
          where: where(armPath),
          taken: seen?.outcomes[outcome] ?? 0,
        });
      });
    }
  });
  const missed: BotCoverage['lines']['missed'] = [];
  for (const [l, id] of [...owner.entries()].sort((a, z) => a[0] - z[0]))
    if (!exercised.has(id)) missed.push({ where: `${file}:${l}`, text: lines[l - 1]!.trim() });
  return {
    name: b.name,
    file,
    rules,
    outcomes,
    lines: { total: owner.size, covered: owner.size - missed.length, missed },
  };
}

/** The lines (1-based) a node spans that hold more than a comment. Internal. */
function linesOf(doc: Document, lc: LineCounter, path: Array<string | number>): number[] {
  const n = doc.getIn(path, true);
  if (!isNode(n) || !n.range) return [];
  const first = lc.linePos(n.range[0]).line;
  const last = lc.linePos(Math.max(n.range[0], n.range[1] - 1)).line;
  const out: number[] = [];
  for (let l = first; l <= last; l++) out.push(l);
  return out;
}

/** Sums the counts of several runs of one rule. Internal. */
function mergeCounts(list: RuleCounts[]): RuleCounts {
  const out: RuleCounts = { triggered: 0, ran: 0, not_run: {}, steps: {} };
  const add = (to: Record<string, number>, from: Record<string, number>) =>
    Object.entries(from).forEach(([k, n]) => (to[k] = (to[k] ?? 0) + n));
  for (const c of list) {
    out.triggered += c.triggered;
    out.ran += c.ran;
    add(out.not_run, c.not_run);
    for (const [i, s] of Object.entries(c.steps)) {
      const st = (out.steps[i] ??= { status: {}, outcomes: {} });
      add(st.status, s.status);
      add(st.outcomes, s.outcomes);
    }
  }
  return out;
}
