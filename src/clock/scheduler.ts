import { createTask, type ScheduledTask } from 'node-cron';
import type { Clock } from './clock.js';
import { metrics } from '../telemetry/metrics.js';

/** A job run by the scheduler; `at` is the time it was due (virtual or real). */
export type JobFn = (at: Date) => Promise<void> | void;

export interface JobOptions {
  /** IANA time zone of the expression (default UTC). */
  timezone?: string;
  /** Called with a job's error; the scheduler keeps going. */
  onError?: (err: unknown) => void;
}

/**
 * Runs cron jobs (node-cron expressions) on the clock's timers: each job is a timer set for its
 * next due time, so on a virtual clock `advance` fires it at its own time, in order, and waits
 * for it to finish (a job is held work). A job never overlaps itself: the next time is set when
 * a run ends (a run that overlaps due times skips them, as node-cron's `noOverlap` does).
 */
export interface Scheduler {
  /** Adds a job; returns a function that removes it. */
  add(name: string, expression: string, fn: JobFn, opts?: JobOptions): () => void;
  stop(): void;
}

/** The longest search for a next due time (a year and a day, in minutes). Internal. */
const SEARCH_MINUTES = 367 * 1440;
const MINUTE = 60_000;

/**
 * The first time after `from` that `task` matches: node-cron's own walker when this version
 * has it (checked against `match`), else a walk minute by minute. Internal.
 */
export function nextMatch(task: ScheduledTask, from: number): number | undefined {
  const walker = (task as unknown as { timeMatcher?: { getNextMatch?: (d: Date) => Date } }).timeMatcher;
  if (walker?.getNextMatch) {
    try {
      const d = walker.getNextMatch(new Date(from)).getTime();
      if (d > from && task.match(new Date(d))) return d;
    } catch {
      // fall through to the walk
    }
  }
  for (let i = 1, t = Math.floor(from / MINUTE) * MINUTE + MINUTE; i <= SEARCH_MINUTES; i++, t += MINUTE) {
    if (task.match(new Date(t))) return t;
  }
  return undefined;
}

/** The most missed due times counted after one run (a long stall is not walked minute by minute). */
const MISSED_MAX = 1000;

/** Counts the due times in (due, now] that a run going past them skipped. Internal. */
function countMissed(name: string, matcher: ScheduledTask, due: number, now: number): void {
  let n = 0;
  let t = due;
  while (n < MISSED_MAX && now > t) {
    const next = nextMatch(matcher, t);
    if (next === undefined || next > now) break;
    n++;
    t = next;
  }
  if (n > 0) metrics.jobsMissed.inc([name], n);
}

/** Creates the scheduler of `clock`. */
export function createScheduler(clock: Clock): Scheduler {
  const cancels = new Set<() => void>();
  return {
    add(name, expression, fn, opts = {}) {
      const matcher = createTask(expression, () => undefined, {
        timezone: opts.timezone ?? 'UTC',
        name: `${name}-matcher`,
      });
      void matcher.stop();
      let stopped = false;
      let cancelTimer: (() => void) | undefined;
      const arm = (from: number) => {
        const due = nextMatch(matcher, from);
        if (due === undefined || stopped) return;
        cancelTimer = clock.setTimer(due, () => {
          const release = clock.hold(`job ${name}`);
          void (async () => {
            let outcome = 'failed';
            try {
              await fn(new Date(due));
              outcome = 'ok';
            } catch (err) {
              opts.onError?.(err);
            } finally {
              metrics.jobsRun.inc([name, outcome]);
              countMissed(name, matcher, due, clock.now());
              // set the next time before letting go, so a virtual clock sees it
              arm(Math.max(due, clock.now()));
              release();
            }
          })();
        });
      };
      arm(clock.now());
      const cancel = () => {
        stopped = true;
        cancelTimer?.();
        cancels.delete(cancel);
        void matcher.destroy();
      };
      cancels.add(cancel);
      return cancel;
    },
    stop() {
      for (const c of [...cancels]) c();
    },
  };
}
