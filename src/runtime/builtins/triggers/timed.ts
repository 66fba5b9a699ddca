import { createTask, validate as validateCron } from 'node-cron';
import { nextMatch } from '../../../clock/scheduler.js';
import type { CheckProblem, TriggerDef, TriggerSetupContext } from '../../contract/types.js';

/** What to do with fires missed while the bot did not run. */
type Missed = 'skip' | 'once' | 'all';

interface ScheduleOptions {
  cron: string;
  timezone: string;
  missed: Missed;
}

/** `missed: all` queues at most this many fires (the most recent ones). */
export const MAX_MISSED = 100;
/** Missed fires counted at most (`event.missed_count`). */
const COUNT_CAP = 10_000;

/** `"0 9 * * 1"` or `{ cron, timezone, missed }` → every field. Internal. */
export function scheduleOptions(v: unknown): ScheduleOptions {
  if (typeof v === 'string') return { cron: v, timezone: 'UTC', missed: 'once' };
  const o = v as Partial<ScheduleOptions>;
  return { cron: String(o.cron), timezone: o.timezone ?? 'UTC', missed: o.missed ?? 'once' };
}

/** The due times of `o` after `from` up to `to` (at most `cap`, the latest kept). Internal. */
function dueBetween(o: ScheduleOptions, from: number, to: number, cap: number): { times: number[]; count: number } {
  const task = createTask(o.cron, () => undefined, { timezone: o.timezone });
  void task.stop();
  const times: number[] = [];
  let count = 0;
  for (let t = nextMatch(task, from); t !== undefined && t <= to && count < COUNT_CAP; t = nextMatch(task, t)) {
    count++;
    times.push(t);
    if (times.length > cap) times.shift();
  }
  void task.destroy();
  return { times, count };
}

/** The event of one fire of a schedule. Internal. */
function fireEvent(ctx: TriggerSetupContext, o: ScheduleOptions, due: number, now: number, missed: number) {
  const scheduled = new Date(due).toISOString();
  return {
    key: `schedule:${ctx.ruleId}:${scheduled}`,
    type: 'schedule',
    rule: ctx.ruleId,
    payload: {
      at: new Date(now).toISOString(),
      scheduled_at: scheduled,
      missed: missed > 0,
      missed_count: missed,
      cron: o.cron,
      timezone: o.timezone,
    },
  };
}

/**
 * On start: the fires missed since the last one (while the bot or the server did not run), as
 * `missed` says — `skip` none, `once` (default) one event for the latest with `missed_count`,
 * `all` one per fire (the latest MAX_MISSED). Internal.
 */
async function catchUp(ctx: TriggerSetupContext, o: ScheduleOptions): Promise<void> {
  if (o.missed === 'skip' || ctx.lastFired === undefined) return;
  const now = ctx.clock.now();
  const { times, count } = dueBetween(o, ctx.lastFired, now, o.missed === 'all' ? MAX_MISSED : 1);
  if (count === 0) return;
  if (o.missed === 'once') return ctx.emit(fireEvent(ctx, o, times.at(-1)!, now, count), { fired: times.at(-1)! });
  if (count > times.length)
    ctx.log.warn(
      { rule: ctx.ruleId, missed: count },
      `schedule of rule ${ctx.ruleId} missed ${count} fires; the latest ${times.length} are queued (missed: all)`,
    );
  for (const due of times) await ctx.emit(fireEvent(ctx, o, due, now, 1), { fired: due });
}

/** True when `tz` is an IANA time zone this Node knows. */
export function validTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/**
 * `schedule`: a cron expression (node-cron, 5 or 6 fields) in a time zone (default UTC). It runs
 * on the server's scheduler, so `serve --virtual-clock` + `pinbot clock advance` fire it at its
 * own virtual time. Its last fire is saved with its event; fires missed while the bot did not run
 * are handled at its next start as `missed:` says (default `once`).
 */
export const scheduleTrigger: TriggerDef = {
  name: 'schedule',
  completeExample: true,
  description: 'At the times of a cron expression (minute hour day month weekday), in a time zone (default UTC).',
  optionsRequired: true,
  options: {
    if: { type: 'string' },
    then: { type: 'string', description: 'cron expression, e.g. "0 9 * * 1-5" (weekdays at 09:00 UTC)' },
    else: {
      type: 'object',
      additionalProperties: false,
      required: ['cron'],
      properties: {
        cron: { type: 'string', description: 'cron expression, e.g. "0 9 * * 1-5"' },
        timezone: { type: 'string', description: 'IANA time zone, e.g. Europe/Paris (default UTC)' },
        missed: {
          enum: ['skip', 'once', 'all'],
          description:
            'fires missed while the bot did not run: skip them, once (default: one ' +
            'event for the latest, event.missed_count says how many), or all (at most ' +
            '100)',
        },
      },
    },
  },
  example: {
    at: '2026-11-23T09:00:00.000Z',
    scheduled_at: '2026-11-23T09:00:00.000Z',
    missed: false,
    missed_count: 0,
    cron: '0 9 * * 1',
    timezone: 'UTC',
  },
  check(v) {
    const o = scheduleOptions(v);
    const out: CheckProblem[] = [];
    const at = typeof v === 'string' ? [] : ['cron'];
    if (!validateCron(o.cron))
      out.push({
        path: at,
        message: `"${o.cron}" is not a cron expression`,
        hint: 'five fields: minute hour day-of-month month day-of-week, e.g. "0 9 * * 1-5"',
      });
    if (!validTimeZone(o.timezone))
      out.push({
        path: ['timezone'],
        message: `unknown time zone "${o.timezone}"`,
        hint: 'use an IANA name such as UTC, Europe/Paris or America/New_York',
      });
    return out;
  },
  setup(ctx, v) {
    const o = scheduleOptions(v);
    // held work: a virtual clock's advance waits for the missed fires to be queued
    const release = ctx.clock.hold(`bot ${ctx.bot}: missed fires of ${ctx.ruleId}`);
    const caught = catchUp(ctx, o)
      .catch((err) => ctx.log.error({ err, rule: ctx.ruleId }, 'schedule could not queue its missed fires'))
      .finally(release);
    return ctx.scheduler.add(
      `bot:${ctx.bot}:${ctx.ruleId}`,
      o.cron,
      async (at) => {
        await caught;
        await ctx.emit(fireEvent(ctx, o, at.getTime(), at.getTime(), 0), { fired: at.getTime() });
      },
      {
        timezone: o.timezone,
        onError: (err) => ctx.log.error({ err, rule: ctx.ruleId }, 'schedule could not queue its event'),
      },
    );
  },
};

/** `startup`: once each time the bot starts (process start or a reload of its file). */
export const startupTrigger: TriggerDef = {
  name: 'startup',
  completeExample: true,
  description: 'Once each time the bot starts: when the process starts, and after its file is reloaded.',
  example: { at: '2026-11-21T12:00:00.000Z', boot: 1 },
};
