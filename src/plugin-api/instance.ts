import type { Logger } from 'pino';
import type { Clock } from '../clock/clock.js';
import type { Scheduler } from '../clock/scheduler.js';
import { validTimeZone } from '../runtime/index.js';
import type { Store } from '../store/core/types.js';
import type { StepTimeoutError } from '../util/step-timeout.js';
import { callPlugin, describeThrown, type BoundaryTarget, type PluginError } from './boundary.js';
import type { PluginOrigin } from './load.js';
import type { CheckedPlugin } from './shape.js';
import type { StateLimits } from './state.js';
import type { ScheduleOptions } from './types.js';
import { validate as validateCron } from 'node-cron';
import { metrics } from '../telemetry/metrics.js';

/**
 * `loaded`: registered, not started (validate, list); `running`: set up; `disabled`: its setup
 * failed; `quarantined`: it failed `plugins.quarantine_after` times in a row.
 */
export type PluginStatus = 'loaded' | 'running' | 'disabled' | 'quarantined';

/** What a started plugin uses: the server's clock, scheduler and store. */
export interface PluginDeps {
  clock: Clock;
  scheduler: Scheduler;
  log: Logger;
  /** Where state shared by every bot lives (the server's store); none in `bots run`. */
  store?: Store;
}

/** How a plugin is looked after (from config). */
export interface Supervision {
  /** Working time of a call (`runtime.step_timeout`). */
  timeoutMs: number;
  /** Consecutive failures after which it is quarantined; 0: never. */
  quarantineAfter: number;
  /** Largest request body its HTTP routes take (`plugins.max_body_bytes`); default MAX_BODY_BYTES. */
  maxBodyBytes?: number;
  /** The bound of its state per bot (`plugins.state`); default STATE_MAX_KEYS, STATE_MAX_TOTAL_BYTES. */
  state?: StateLimits;
  log: Logger;
}

/**
 * One loaded plugin at run time: its checked definition, validated config, status, and the
 * count of consecutive failures that quarantines it. It is the BoundaryTarget every call into
 * the plugin goes through (see boundary.ts), and owns the jobs the plugin scheduled.
 */
export class PluginInstance implements BoundaryTarget {
  status: PluginStatus = 'loaded';
  message = '';
  /** Consecutive failures, and all failures since the start. */
  failures = 0;
  failuresTotal = 0;
  lastError?: string;
  deps?: PluginDeps;
  readonly log: Logger;
  private readonly jobs = new Map<string, () => void>();
  private ac = new AbortController();
  private readonly onStop: Array<() => void> = [];

  constructor(
    readonly checked: CheckedPlugin,
    readonly origin: PluginOrigin,
    readonly config: unknown,
    readonly supervision: Supervision,
  ) {
    this.log = supervision.log.child({ plugin: checked.name });
  }

  get name(): string {
    return this.checked.name;
  }
  get roots(): readonly string[] {
    return this.origin.roots;
  }
  /** Aborts when the plugin stops or is quarantined (setup-level work should end then). */
  get signal(): AbortSignal {
    return this.ac.signal;
  }

  unavailable(): string | undefined {
    if (this.status === 'disabled') return `the plugin is disabled (${this.message})`;
    if (this.status === 'quarantined') return `the plugin is quarantined (${this.message}); fix it and restart pinbot`;
    return undefined;
  }

  failed(err: PluginError | StepTimeoutError, outside = false): void {
    this.failuresTotal++;
    metrics.pluginFailures.inc([this.name]);
    this.lastError = err.message;
    // input anyone may send: never a step towards quarantine (boundary.ts BoundaryCallOptions.outside);
    // the route logs it, with its request id
    if (outside) return;
    this.failures++;
    this.log.warn({ failures: this.failures, frame: (err as PluginError).frame }, err.message);
    const n = this.supervision.quarantineAfter;
    if (n > 0 && this.failures >= n && this.status !== 'quarantined' && this.status !== 'disabled') {
      this.stop('quarantined', `${this.failures} consecutive failures; the last: ${err.message}`);
      this.log.error(
        `plugin ${this.name} quarantined after ${this.failures} consecutive failures ` +
          `(plugins.quarantine_after: ${n}); its actions, conditions and sources fail ` +
          `at once until pinbot restarts. Last failure: ${err.message}`,
      );
    }
  }

  succeeded(): void {
    this.failures = 0;
  }

  /** Something the plugin runs that is not a call (a stray error from its timer): counts as a failure. */
  strayError(err: unknown, frame?: string): void {
    const e = Object.assign(
      new Error(
        `plugin ${this.name}: uncaught error from its own code (a timer, event or ` +
          `promise it started): ${describeThrown(err)}${frame ? ` (at ${frame})` : ''}`,
      ),
      { frame },
    );
    this.failed(e as unknown as PluginError);
  }

  /** Starts (or starts again) with the server's clock, scheduler and store. */
  begin(deps: PluginDeps): void {
    this.deps = deps;
    this.status = 'running';
    this.message = '';
    this.failures = 0;
    if (this.ac.signal.aborted) this.ac = new AbortController();
  }

  /** Ends the plugin's jobs and background work: at stop, on quarantine, when setup failed. */
  stop(status: PluginStatus, message: string): void {
    this.status = status;
    this.message = message;
    for (const cancel of this.jobs.values()) cancel();
    this.jobs.clear();
    this.ac.abort();
    for (const f of this.onStop.splice(0)) f();
  }

  /** Runs `f` when the plugin stops or is quarantined. */
  whenStopped(f: () => void): void {
    if (this.ac.signal.aborted) f();
    else this.onStop.push(f);
  }

  /**
   * A cron job on the shared scheduler, run through the boundary with the plugin's timeout.
   * `owner` is the bot it was scheduled for ('' for setup); a job of the same owner and name
   * replaces the earlier one.
   */
  schedule(owner: string, cron: string, fn: (at: Date) => unknown, opts: ScheduleOptions = {}): () => void {
    const deps = this.deps;
    if (!deps)
      throw new Error(
        `plugin ${this.name}: schedule works once the plugin has started (call it from setup, or from an action)`,
      );
    if (typeof cron !== 'string' || !validateCron(cron))
      throw new Error(
        `plugin ${this.name}: schedule: "${String(cron)}" is not a cron expression ` +
          `(minute hour day month weekday, e.g. "0 9 * * 1")`,
      );
    if (opts.timezone !== undefined && !validTimeZone(opts.timezone))
      throw new Error(`plugin ${this.name}: schedule: unknown time zone "${opts.timezone}"`);
    if (typeof fn !== 'function') throw new Error(`plugin ${this.name}: schedule needs a function to run`);
    if (this.unavailable()) return () => undefined;
    const id = `${owner}\u0000${opts.name ?? cron}`;
    this.jobs.get(id)?.();
    const what = `scheduled job ${opts.name ?? cron}${owner ? ` of bot ${owner}` : ''}`;
    const cancelJob = deps.scheduler.add(
      `plugin:${this.name}:${owner}:${opts.name ?? cron}`,
      cron,
      (at) => callPlugin(this, what, () => fn(at), { timeoutMs: this.supervision.timeoutMs }).then(() => undefined),
      {
        timezone: opts.timezone,
        onError: () => undefined, // counted and logged by the boundary
      },
    );
    const cancel = () => {
      cancelJob();
      if (this.jobs.get(id) === cancel) this.jobs.delete(id);
    };
    this.jobs.set(id, cancel);
    return cancel;
  }
}
