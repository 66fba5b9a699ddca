import { loadProblem, runLoad, type LoadResult, type LoadSpec } from './load.js';
import { median, type Figure } from './figure.js';
import type { ServerProcess } from './server-process.js';

/**
 * A load to run against one server: the spec without the common settings, and the server
 * process, whose CPU time per request is then measured too. With `spread`, the connections are
 * spread evenly over several servers of one deployment (e.g. three processes on one database):
 * the figures are their sums (latencies: the worst of them).
 */
export type Variant = Omit<LoadSpec, 'connections' | 'durationS'> & {
  connections?: number;
  durationS?: number;
  server?: ServerProcess;
  spread?: Array<{ url: string; server: ServerProcess }>;
};

/**
 * Waits until `server` has been idle (under 5% of a core) for 300 ms, at most `maxMs`: a load
 * generator that stops leaves requests in flight, and the next run must not pay for them.
 */
export async function settle(server: ServerProcess, maxMs = 60_000): Promise<void> {
  const until = performance.now() + maxMs;
  let last = server.cpuMs();
  while (last !== undefined && performance.now() < until) {
    await new Promise((r) => setTimeout(r, 300));
    const now = server.cpuMs();
    if (now === undefined || now - last < 15) return;
    last = now;
  }
}

/** The load of a variant spread over its servers, as one result. Internal. */
async function spreadLoad(v: Variant, spec: LoadSpec): Promise<LoadResult> {
  const parts = v.spread!;
  const results = await Promise.all(
    // Each server gets its own share of the requests (connection j of the spec goes to server j mod n).
    parts.map((p, i) =>
      runLoad({
        ...spec,
        url: p.url,
        connections: Math.floor(spec.connections / parts.length) + (i < spec.connections % parts.length ? 1 : 0),
        requests: spec.requests.filter((_, j) => j % parts.length === i),
      }),
    ),
  );
  const statusCodes: Record<string, number> = {};
  for (const r of results)
    for (const [c, n] of Object.entries(r.statusCodes)) statusCodes[c] = (statusCodes[c] ?? 0) + n;
  const sum = (f: (r: LoadResult) => number) => results.reduce((s, r) => s + f(r), 0);
  return {
    rps: sum((r) => r.rps),
    p50: Math.max(...results.map((r) => r.p50)),
    p99: Math.max(...results.map((r) => r.p99)),
    total: sum((r) => r.total),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    statusCodes,
  };
}

/** Runs one load, measuring the servers' CPU time around it. Internal. */
async function measure(v: Variant, spec: LoadSpec): Promise<LoadResult> {
  const servers = v.spread ? v.spread.map((p) => p.server) : v.server ? [v.server] : [];
  const cpu = () =>
    servers.reduce<number | undefined>(
      (s, x) => (s === undefined || x.cpuMs() === undefined ? undefined : s + x.cpuMs()!),
      0,
    );
  const before = servers.length ? cpu() : undefined;
  const r = v.spread ? await spreadLoad(v, spec) : await runLoad(spec);
  const after = servers.length ? cpu() : undefined;
  if (before !== undefined && after !== undefined && r.total > 0) r.cpuUsPerReq = ((after - before) * 1000) / r.total;
  return r;
}

export interface RoundOptions {
  rounds: number;
  durationS: number;
  connections: number;
  /** Seconds of load sent to each variant before the measured rounds (JIT, caches). */
  warmupS?: number;
  progress?: (msg: string) => void;
}

/**
 * Runs every variant once per round, interleaved (A B A B …), after a short unmeasured warm-up
 * of each, and returns each variant's runs in round order. Interleaving spreads the machine's
 * drift over every variant equally; the ratios are then taken round by round.
 *
 * @example
 * const runs = await interleave({ pinbot: { url, requests }, bare: { url: bareUrl, requests } }, opts);
 */
export async function interleave<K extends string>(
  variants: Record<K, Variant>,
  opts: RoundOptions,
): Promise<Record<K, LoadResult[]>> {
  const names = Object.keys(variants) as K[];
  const out = Object.fromEntries(names.map((n) => [n, [] as LoadResult[]])) as Record<K, LoadResult[]>;
  const spec = ({ server: _server, spread: _spread, ...v }: Variant, durationS: number): LoadSpec => ({
    ...v,
    connections: v.connections ?? opts.connections,
    durationS,
  });
  const run = async (v: Variant, durationS: number) => {
    const r = await measure(v, spec(v, durationS));
    if (v.server) await settle(v.server);
    for (const p of v.spread ?? []) await settle(p.server);
    return r;
  };
  const warmupS = opts.warmupS ?? 1;
  if (warmupS > 0) for (const n of names) await run(variants[n], warmupS);
  for (let round = 1; round <= opts.rounds; round++) {
    for (const n of names) {
      const r = await run(variants[n], variants[n].durationS ?? opts.durationS);
      const cpu = r.cpuUsPerReq === undefined ? '' : `, CPU ${Math.round(r.cpuUsPerReq)} µs/req`;
      opts.progress?.(
        `  round ${round}/${opts.rounds} ${n}: ${Math.round(r.rps)} req/s, p50 ` +
          `${r.p50} ms, p99 ${r.p99} ` +
          `ms${cpu}${loadProblem(r) ? ` (${loadProblem(r)})` : ''}`,
      );
      out[n].push(r);
    }
  }
  return out;
}

/**
 * A figure from the runs of one variant, with the median of the round-by-round ratios of its
 * req/s to the baseline's (when given) and whether the target holds: the median at least `min`
 * and, with `roundMin`, every round at least that (a noisy machine moves single rounds, but a
 * path that is slow in any round is not what a user gets "most of the time"). Runs with errors
 * or non-2xx answers make the figure fail with a note: a fast error is not throughput.
 */
export function throughputFigure(
  bench: string,
  name: string,
  runs: readonly LoadResult[],
  baseline?: { name: string; runs: readonly LoadResult[]; min?: number; roundMin?: number; target?: string },
): Figure {
  const problems = runs.map(loadProblem).filter((p): p is string => p !== undefined);
  const fig: Figure = {
    bench,
    name,
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
  };
  const cpu = runs.map((r) => r.cpuUsPerReq).filter((x): x is number => x !== undefined);
  if (cpu.length === runs.length) fig.cpuUsPerReq = median(cpu);
  if (baseline) {
    const ratios = runs.map((r, i) => r.rps / baseline.runs[i]!.rps);
    fig.ratio = median(ratios);
    fig.baseline = baseline.name;
    fig.note = `rounds ${ratios.map((x) => x.toFixed(2)).join(' ')}`;
    if (baseline.min !== undefined) {
      const roundMin = baseline.roundMin;
      fig.target =
        baseline.target ?? `≥ ${baseline.min}×${roundMin === undefined ? '' : `, every round ≥ ${roundMin}×`}`;
      const low = roundMin === undefined ? [] : ratios.filter((x) => x < roundMin);
      fig.pass = fig.ratio >= baseline.min && low.length === 0 && problems.length === 0;
      if (low.length) fig.note = `${fig.note}; ${low.length} round(s) under ${roundMin}×`;
    }
  }
  if (problems.length) fig.note = [`INVALID: ${problems[0]}`, fig.note].filter(Boolean).join('; ');
  return fig;
}

/**
 * Adds to a figure's notes its CPU µs per request as a multiple of the baseline's (median of the
 * rounds' ratios; 1.20× costs a fifth more): steadier than req/s on a busy machine.
 */
export function withCpuRatio(fig: Figure, runs: readonly LoadResult[], baseline: readonly LoadResult[]): Figure {
  const ratios = runs.flatMap((r, i) =>
    r.cpuUsPerReq && baseline[i]?.cpuUsPerReq ? [r.cpuUsPerReq / baseline[i]!.cpuUsPerReq!] : [],
  );
  if (ratios.length === runs.length)
    fig.note = [fig.note, `CPU µs/req ${median(ratios).toFixed(2)}× the baseline's`].filter(Boolean).join('; ');
  return fig;
}
