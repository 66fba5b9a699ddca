/**
 * What the console's charts show, read from the Prometheus counters (telemetry/metrics.ts): a
 * sample of the cumulative counts every minute on the server's clock, kept for a day, so a chart
 * is the difference between samples. Per bot: runs, failures and not-runs; for the server:
 * requests, 5xx answers and durable-commit time. Bounded: 1,441 samples of at most MAX_BOTS bots.
 */
import type { Clock } from '../clock/clock.js';
import { metrics } from '../telemetry/metrics.js';

const MINUTE = 60_000;
const DAY_SAMPLES = 1441;
/** Bots charted (the first this many names, in order). */
const MAX_BOTS = 200;

/** The cumulative counts of one bot. Internal. */
interface BotCounts {
  runs: number;
  failed: number;
  notRun: number;
}

/** One sample: the counts at `at`. Internal. */
interface Sample {
  at: number;
  bots: Map<string, BotCounts>;
  requests: number;
  errors: number;
  commitSum: number;
  commitCount: number;
}

/** The counts now. Internal. */
function countsNow(at: number): Sample {
  const bots = new Map<string, BotCounts>();
  for (const c of metrics.botRuns.all()) {
    const [bot, , outcome] = c.labels as [string, string, string];
    let b = bots.get(bot);
    if (!b) {
      if (bots.size >= MAX_BOTS) continue;
      bots.set(bot, (b = { runs: 0, failed: 0, notRun: 0 }));
    }
    if (outcome === 'failed') b.failed += c.value;
    else if (outcome === 'not_run') b.notRun += c.value;
    else b.runs += c.value;
  }
  let requests = 0;
  let errors = 0;
  for (const c of metrics.httpRequests.all()) {
    requests += c.value;
    if (c.labels[2]!.startsWith('5')) errors += c.value;
  }
  let commitSum = 0;
  let commitCount = 0;
  for (const c of metrics.storeCommit.all()) {
    commitSum += c.sum;
    commitCount += c.count;
  }
  return { at, bots, requests, errors, commitSum, commitCount };
}

/** A bot's chart: per bin, runs that ran and runs that failed. */
export interface BotSeries {
  runs: number[];
  failed: number[];
  binMs: number;
}

/** The server's one-glance health. */
export interface Health {
  /** Requests per second over the last minute (or since the first sample). */
  rps: number;
  /** 5xx answers in the last hour. */
  errors: number;
  /** Mean durable-commit time (ms) over the last minute; undefined without commits. */
  commitMs?: number;
}

/**
 * The counters' history for the console's charts.
 *
 * @example const h = new MetricHistory(clock); h.start(); h.botSeries('tip-jar', 'hour')
 */
export class MetricHistory {
  private readonly samples: Sample[] = [];
  private cancel?: () => void;

  constructor(private readonly clock: Clock) {}

  /** Samples now and then every minute (a heartbeat timer: a virtual clock moves for it only after a change). */
  start(): void {
    const tick = () => {
      this.sample();
      this.cancel = this.clock.setTimer(this.clock.now() + MINUTE, tick, { heartbeat: true });
    };
    tick();
  }

  stop(): void {
    this.cancel?.();
    this.cancel = undefined;
  }

  /** Takes a sample now (tests call it to make a minute pass). */
  sample(): void {
    this.samples.push(countsNow(this.clock.now()));
    if (this.samples.length > DAY_SAMPLES) this.samples.shift();
  }

  /** Runs and failures of `bot` per minute over the last hour, or per hour over the last day. */
  botSeries(bot: string, window: 'hour' | 'day'): BotSeries {
    const now = countsNow(this.clock.now());
    const binMs = window === 'hour' ? MINUTE : 60 * MINUTE;
    const bins = window === 'hour' ? 60 : 24;
    const runs = new Array<number>(bins).fill(0);
    const failed = new Array<number>(bins).fill(0);
    const points = [...this.samples, now];
    for (let i = 1; i < points.length; i++) {
      const age = now.at - points[i]!.at;
      const bin = bins - 1 - Math.floor(age / binMs);
      if (bin < 0) continue;
      const a = points[i - 1]!.bots.get(bot);
      const b = points[i]!.bots.get(bot);
      if (!b) continue;
      runs[bin]! += b.runs + b.failed - (a ? a.runs + a.failed : 0);
      failed[bin]! += b.failed - (a?.failed ?? 0);
    }
    return { runs, failed, binMs };
  }

  /** Requests per second, 5xx answers in the last hour, mean commit time over the last minute. */
  health(): Health {
    const now = countsNow(this.clock.now());
    const minuteAgo = [...this.samples].reverse().find((s) => now.at - s.at >= MINUTE) ?? this.samples[0];
    const hourAgo = this.samples.find((s) => now.at - s.at <= 60 * MINUTE) ?? this.samples[0];
    const secs = minuteAgo ? Math.max(1, (now.at - minuteAgo.at) / 1000) : 0;
    const rps = minuteAgo && secs ? (now.requests - minuteAgo.requests) / secs : 0;
    const commits = now.commitCount - (minuteAgo?.commitCount ?? 0);
    const commitMs = commits > 0 ? ((now.commitSum - (minuteAgo?.commitSum ?? 0)) / commits) * 1000 : undefined;
    return { rps, errors: now.errors - (hourAgo?.errors ?? 0), ...(commitMs !== undefined ? { commitMs } : {}) };
  }
}

/** A bot's not-run reasons since the server started, most first. */
export function notRunReasons(bot: string): Array<{ reason: string; count: number }> {
  const by = new Map<string, number>();
  for (const c of metrics.botNotRun.all())
    if (c.labels[0] === bot) by.set(c.labels[2]!, (by.get(c.labels[2]!) ?? 0) + c.value);
  return [...by]
    .map(([reason, count]) => ({ reason, count }))
    .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
}

/** A bot's event-to-action times since the server started: the count per histogram bucket. */
export function latencyBuckets(bot: string): Array<{ le: string; count: number }> {
  const f = metrics.botEventToAction;
  const counts = new Array<number>(f.buckets.length + 1).fill(0);
  for (const c of f.all()) if (c.labels[0] === bot) c.counts.forEach((n, i) => (counts[i]! += n));
  return counts.map((count, i) => ({
    le: i < f.buckets.length ? `≤ ${seconds(f.buckets[i]!)}` : `> ${seconds(f.buckets.at(-1)!)}`,
    count,
  }));
}

/** 0.25 → "250 ms", 120 → "2 min". Internal. */
function seconds(s: number): string {
  if (s < 1) return `${Math.round(s * 1000)} ms`;
  if (s < 60) return `${s} s`;
  return s < 3600 ? `${s / 60} min` : `${s / 3600} h`;
}
