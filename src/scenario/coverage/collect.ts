import type { InProcessTransport } from '../../api/in-process.js';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Trace } from '../../runtime/index.js';

/**
 * What one scenario's run exercised, counted as it goes (a scenario's `coverage` in its result;
 * plain JSON, so worker processes send it back): each request the embedded server answered
 * (method, path, status, error code) and each bot rule's traces (triggered, ran, why not, each
 * step's status and outcome — a `choose` step's branch). Bounded: counts keyed by what was
 * seen, never a list of requests; paths are cut at 200 characters.
 */
export interface ScenarioCoverage {
  /**
   * `METHOD path status code by` → count (path without the query; code `-` for none; by `steps`
   * or `bots`: the runtime's client says `User-Agent: pinbot-client`, a scenario's steps do not).
   */
  requests: Record<string, number>;
  /** bot name → rule id → counts. */
  bots: Record<string, Record<string, RuleCounts>>;
}

export interface RuleCounts {
  /** Traces: the rule's trigger matched an event. */
  triggered: number;
  /** Runs that took their steps (outcome done, failed, dry_run or interrupted). */
  ran: number;
  /** Why it did not run (trace reason) → count. */
  not_run: Record<string, number>;
  /** Step index → status → count, and outcome (a `choose` branch label, an `ask` outcome) → count. */
  steps: Record<string, { status: Record<string, number>; outcomes: Record<string, number> }>;
}

const PATH_MAX = 200;
/** Distinct request keys kept (a scenario probing random paths cannot grow it without end). */
const KEYS_MAX = 5_000;

/**
 * The outcome a step reports for coverage: a `choose` step's branch label (`branch 2`, `else`,
 * `no branch`); any action whose result has a string `outcome` (how a step kind reports its
 * outcomes — an `ask` step's `answered`, `timeout`, …). Internal.
 */
export function stepOutcome(action: string, result: unknown): string | undefined {
  if (result && typeof result === 'object') {
    const r = result as { outcome?: unknown; label?: unknown };
    if (typeof r.outcome === 'string') return r.outcome;
    if (action === 'choose' && typeof r.label === 'string') return r.label;
  }
  // a long result is kept as truncated JSON text by the trace
  if (typeof result === 'string') return /"(?:outcome|label)":"([^"]{1,40})"/.exec(result)?.[1];
  return undefined;
}

/** Counts requests and traces for one scenario. */
export class CoverageCollector {
  private readonly data: ScenarioCoverage = { requests: {}, bots: {} };

  /**
   * Counts every request `http` answers from now on, and those its embedded bots hand over in
   * process (`inProcess`); call again after a restart (a new server).
   */
  attach(http: Server, inProcess?: InProcessTransport): void {
    const watch = (req: IncomingMessage, res: ServerResponse) => this.watch(req, res);
    http.prependListener('request', watch);
    inProcess?.observe(watch);
  }

  private watch(req: IncomingMessage, res: ServerResponse): void {
    let code = '';
    const end = res.end.bind(res) as (...a: unknown[]) => ServerResponse;
    // the error code is in the body of a refusal: read it as it is sent
    res.end = ((...args: unknown[]) => {
      const chunk = args[0];
      if (res.statusCode >= 400 && (typeof chunk === 'string' || Buffer.isBuffer(chunk)) && chunk.length < 64_000) {
        code = /"code"\s*:\s*"([a-z0-9_]{1,60})"/.exec(chunk.toString())?.[1] ?? '';
      }
      return end(...args);
    }) as ServerResponse['end'];
    res.once('finish', () => {
      const path = (req.url ?? '/').split('?')[0]!.slice(0, PATH_MAX);
      const by = req.headers['user-agent'] === 'pinbot-client' ? 'bots' : 'steps';
      const key = `${req.method} ${path.replace(/\s/g, '%20')} ${res.statusCode} ${code || '-'} ${by}`;
      if (key in this.data.requests || Object.keys(this.data.requests).length < KEYS_MAX)
        this.data.requests[key] = (this.data.requests[key] ?? 0) + 1;
    });
  }

  /** Counts one trace of a bot. */
  trace(t: Trace): void {
    const rules = (this.data.bots[t.bot] ??= {});
    const r = (rules[t.rule] ??= { triggered: 0, ran: 0, not_run: {}, steps: {} });
    r.triggered++;
    if (t.outcome === 'not_run') r.not_run[t.reason ?? 'unknown'] = (r.not_run[t.reason ?? 'unknown'] ?? 0) + 1;
    else r.ran++;
    for (const s of t.steps) {
      const st = (r.steps[String(s.index)] ??= { status: {}, outcomes: {} });
      st.status[s.status] = (st.status[s.status] ?? 0) + 1;
      const outcome = stepOutcome(s.action, s.result);
      if (outcome) st.outcomes[outcome] = (st.outcomes[outcome] ?? 0) + 1;
    }
  }

  result(): ScenarioCoverage {
    return structuredClone(this.data);
  }
}
