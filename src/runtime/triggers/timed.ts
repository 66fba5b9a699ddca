import { validate as validateCron } from 'node-cron';
import type { CheckProblem, TriggerDef } from '../types.js';

interface ScheduleOptions {
  cron: string;
  timezone: string;
}

/** `"0 9 * * 1"` or `{ cron, timezone }` → both fields. Internal. */
export function scheduleOptions(v: unknown): ScheduleOptions {
  if (typeof v === 'string') return { cron: v, timezone: 'UTC' };
  const o = v as Partial<ScheduleOptions>;
  return { cron: String(o.cron), timezone: o.timezone ?? 'UTC' };
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
 * own virtual time. A fire missed while nothing ran is not replayed.
 */
export const scheduleTrigger: TriggerDef = {
  name: 'schedule',
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
      },
    },
  },
  example: { at: '2026-11-23T09:00:00.000Z', cron: '0 9 * * 1', timezone: 'UTC' },
  check(v) {
    const o = scheduleOptions(v);
    const out: CheckProblem[] = [];
    const at = typeof v === 'string' ? [] : ['cron'];
    if (!validateCron(o.cron)) out.push({ path: at, message: `"${o.cron}" is not a cron expression`, hint: 'five fields: minute hour day-of-month month day-of-week, e.g. "0 9 * * 1-5"' });
    if (!validTimeZone(o.timezone)) out.push({ path: ['timezone'], message: `unknown time zone "${o.timezone}"`, hint: 'use an IANA name such as UTC, Europe/Paris or America/New_York' });
    return out;
  },
  setup(ctx, v) {
    const o = scheduleOptions(v);
    return ctx.scheduler.add(
      `bot:${ctx.bot}:${ctx.ruleId}`,
      o.cron,
      (at) => ctx.emit({ key: `schedule:${ctx.ruleId}:${at.toISOString()}`, type: 'schedule', rule: ctx.ruleId, payload: { at: at.toISOString(), cron: o.cron, timezone: o.timezone } }),
      { timezone: o.timezone, onError: (err) => ctx.log.error({ err, rule: ctx.ruleId }, 'schedule could not queue its event') },
    );
  },
};

/** `startup`: once each time the bot starts (process start or a reload of its file). */
export const startupTrigger: TriggerDef = {
  name: 'startup',
  description: 'Once each time the bot starts: when the process starts, and after its file is reloaded.',
  example: { at: '2026-11-21T12:00:00.000Z', boot: 1 },
};
