import { createTask, schedule, type ScheduledTask } from 'node-cron';
import type { Clock } from './clock.js';
import { VirtualClock } from './clock.js';

/** A job run by the scheduler; `at` is the time it was due (virtual or real). */
export type JobFn = (at: Date) => Promise<void> | void;

export interface JobOptions {
  /** IANA time zone of the expression (default UTC). */
  timezone?: string;
  /** Called with a job's error; the scheduler keeps going. */
  onError?: (err: unknown) => void;
}

/**
 * Runs cron jobs (node-cron expressions) against the clock. With the system clock node-cron
 * fires them; with a virtual clock they fire only when `advanceTo` moves time past them — each
 * at its own virtual time, in order, and `advanceTo` returns when all have finished.
 */
export interface Scheduler {
  add(name: string, expression: string, fn: JobFn, opts?: JobOptions): () => void;
  /** Virtual clock only: moves time to `ms`, running every due job on the way. */
  advanceTo(ms: number): Promise<void>;
  stop(): void;
}

interface Job {
  name: string;
  fn: JobFn;
  opts: JobOptions;
  matcher: ScheduledTask;
  live?: ScheduledTask;
}

const MINUTE = 60_000;

/** Creates the scheduler for `clock` (real node-cron timers, or virtual stepping). */
export function createScheduler(clock: Clock): Scheduler {
  const jobs = new Set<Job>();
  let chain: Promise<void> = Promise.resolve();
  const run = async (job: Job, at: Date) => {
    try {
      await job.fn(at);
    } catch (err) {
      job.opts.onError?.(err);
    }
  };
  return {
    add(name, expression, fn, opts = {}) {
      const timezone = opts.timezone ?? 'UTC';
      const matcher = createTask(expression, () => undefined, { timezone, name: `${name}-matcher` });
      void matcher.stop();
      const job: Job = { name, fn, opts, matcher };
      if (!clock.virtual) {
        job.live = schedule(expression, (ctx) => run(job, ctx.date), { timezone, name, noOverlap: true });
      }
      jobs.add(job);
      return () => {
        jobs.delete(job);
        void job.live?.destroy();
        void job.matcher.destroy();
      };
    },
    advanceTo(ms) {
      if (!(clock instanceof VirtualClock)) return Promise.reject(new Error('the clock is not virtual: start serve with --virtual-clock'));
      const step = async () => {
        const from = clock.now();
        if (ms < from) {
          clock.set(ms);
          return;
        }
        // Every whole minute in (from, ms]: node-cron expressions here have minute resolution.
        for (let t = Math.floor(from / MINUTE) * MINUTE + MINUTE; t <= ms; t += MINUTE) {
          const at = new Date(t);
          const due = [...jobs].filter((j) => j.matcher.match(at));
          if (due.length === 0) continue;
          clock.set(t);
          for (const job of due) await run(job, at);
        }
        clock.set(ms);
      };
      const next = chain.then(step);
      chain = next.catch(() => undefined);
      return next;
    },
    stop() {
      for (const job of jobs) {
        void job.live?.destroy();
        void job.matcher.destroy();
      }
      jobs.clear();
    },
  };
}
