/**
 * pinbot's Prometheus metrics: the families (one table, `METRIC_TABLE`, which docs/operations.md
 * "Monitoring" lists and test/telemetry/metrics.test.ts holds to the exposition), recorded
 * process-wide (each process serves its own `/metrics`), and printed with prom-client together
 * with its default process and Node metrics.
 *
 * No label carries a key, a PIN, a display name or message text: labels are route patterns,
 * methods, status codes, bot and rule names (the operator's files), trace reason codes, bucket,
 * source, plugin and job names. prom-client is loaded on the first scrape only.
 */
import { CounterFamily, GaugeFamily, HistogramFamily } from './families.js';

/** One metric family of the table. */
export interface MetricRow {
  name: string;
  type: 'counter' | 'gauge' | 'histogram';
  labels: readonly string[];
  help: string;
}

/** Bucket bounds (seconds) of request and commit durations. */
const FAST = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Bucket bounds (seconds) from an event to the bot's answer (polls take seconds). */
const SLOW = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600];

const counter = (name: string, labels: string[], help: string) => new CounterFamily(name, help, labels);
const histogram = (name: string, labels: string[], help: string, buckets: number[]) =>
  new HistogramFamily(name, help, labels, buckets);
const gauge = (name: string, labels: string[], help: string) => new GaugeFamily(name, help, labels);

/** The families, process-wide. */
export const metrics = {
  httpRequests: counter(
    'pinbot_http_requests_total',
    ['route', 'method', 'status'],
    'HTTP requests answered, by route pattern, method and status',
  ),
  httpDuration: histogram(
    'pinbot_http_request_duration_seconds',
    ['route', 'method'],
    'Time from a request to its answer, by route pattern and method',
    FAST,
  ),
  botRuns: counter(
    'pinbot_bot_runs_total',
    ['bot', 'rule', 'outcome'],
    'Rule runs of bots, by outcome (done, not_run, failed, dry_run, interrupted)',
  ),
  botNotRun: counter(
    'pinbot_bot_not_run_total',
    ['bot', 'rule', 'reason'],
    'Rule runs that did not run, by trace reason code',
  ),
  botEventToAction: histogram(
    'pinbot_bot_event_to_action_seconds',
    ['bot'],
    "Time from an event to the bot's first answering API call, on the bot's clock",
    SLOW,
  ),
  botPollErrors: counter('pinbot_bot_poll_errors_total', ['bot', 'source'], 'Failed polls of a bot source'),
  rateLimited: counter('pinbot_rate_limited_total', ['bucket'], 'Requests refused by a rate limit bucket'),
  storeCommit: histogram(
    'pinbot_store_commit_duration_seconds',
    ['driver'],
    'Time to make a commit durable: a group commit (journal append and fsync) or a PostgreSQL commit',
    FAST,
  ),
  journalBytes: gauge(
    'pinbot_store_journal_bytes',
    [],
    'Size of the journal of the file store since its last compaction',
  ),
  botDialogsWaiting: gauge(
    'pinbot_bot_dialogs_waiting',
    ['bot'],
    'People in a dialog with a bot now (an ask, or a plugin ctx.ask, waiting for ' +
      'their answer), in the process running the bot',
  ),
  pluginFailures: counter('pinbot_plugin_failures_total', ['plugin'], 'Plugin calls that threw or timed out'),
  jobsRun: counter('pinbot_scheduler_jobs_total', ['job', 'outcome'], 'Scheduled jobs run, by outcome (ok, failed)'),
  jobsMissed: counter(
    'pinbot_scheduler_jobs_missed_total',
    ['job'],
    'Due times of a job skipped because its previous run was still going',
  ),
};

/** The metric table: pinbot's own families (docs/operations.md lists the same). */
export const METRIC_TABLE: readonly MetricRow[] = Object.values(metrics).map((f) => ({
  name: f.name,
  type: f.type,
  labels: f.labelNames,
  help: f.help,
}));

type PromClient = typeof import('prom-client');
let registry: Promise<{ text: () => Promise<string>; contentType: string }> | undefined;

/**
 * The exposition in the Prometheus text format (0.0.4): pinbot's families and prom-client's
 * default process and Node metrics (collected from the first call on).
 */
export async function metricsText(): Promise<{ text: string; contentType: string }> {
  registry ??= import('prom-client').then((mod: PromClient & { default?: PromClient }) => {
    const client = mod.default ?? mod;
    const r = new client.Registry();
    client.collectDefaultMetrics({ register: r });
    for (const f of Object.values(metrics)) r.registerMetric(f as unknown as Parameters<typeof r.registerMetric>[0]);
    return { text: () => r.metrics(), contentType: r.contentType };
  });
  const r = await registry;
  return { text: await r.text(), contentType: r.contentType };
}
