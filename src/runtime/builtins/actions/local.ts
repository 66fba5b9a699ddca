import { parseDuration, DURATION_PATTERN } from '../../../util/duration.js';
import { isTemplate } from '../../liquid/templates.js';
import type { ActionDef } from '../../contract/types.js';

/** Text a template rendered, back to a number or boolean when it looks like one (for `set`). */
export function typed(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const t = v.trim();
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  if (t === 'true') return true;
  if (t === 'false') return false;
  return v;
}

/** `set`: persistent bot variables (`vars.NAME` in templates). */
const set: ActionDef = {
  name: 'set',
  description:
    'Sets persistent bot variables (read as vars.NAME). Rendered text that looks like ' +
    'a number or true/false is stored as one.',
  schema: {
    type: 'object',
    minProperties: 1,
    propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
    description: 'NAME: value (values are Liquid templates)',
  },
  example: { greeted: '{{ vars.greeted | plus: 1 }}', last_sender: '{{ event.sender.pin_code }}' },
  effect: 'local',
  prepare: (args) => Object.fromEntries(Object.entries(args as Record<string, unknown>).map(([k, v]) => [k, typed(v)])),
  async run(args, ctx) {
    ctx.setVars(args as Record<string, unknown>);
    return args;
  },
};

/**
 * `wait`: pauses this run (other events keep being handled). The deadline is written before the
 * wait starts, so after a restart the run waits only what was left.
 */
const wait: ActionDef = {
  name: 'wait',
  description:
    'Pauses this run for a duration (90s, 15m, 2h, 1d). Survives restarts: the ' +
    'deadline is persisted. Uses the bot clock (virtual clocks included).',
  schema: { type: 'string', description: 'a duration like 30s, 15m, 2h (or a Liquid template giving one)' },
  example: '10m',
  effect: 'local',
  durable: true,
  check(args) {
    const s = String(args);
    if (!isTemplate(s) && parseDuration(s) === undefined)
      return [
        {
          path: [],
          message: `"${s}" is not a duration`,
          hint: `like 90s, 15m, 2h or 1d (pattern ${DURATION_PATTERN})`,
        },
      ];
    return [];
  },
  prepare(args, ctx) {
    const ms = parseDuration(String(args));
    if (ms === undefined) throw new Error(`wait: "${String(args)}" is not a duration like 90s, 15m, 2h`);
    return { until: ctx.clock.now() + ms, duration: String(args) };
  },
  async run(args, ctx) {
    await ctx.sleepUntil((args as { until: number }).until);
    return { waited: (args as { duration: string }).duration };
  },
};

/** `log`: a line in the process log and in the trace. */
const log: ActionDef = {
  name: 'log',
  description:
    'Writes a line to the log (and the trace). A string, or { message, level } with level debug, info, warn or error.',
  schema: {
    if: { type: 'string' },
    then: { type: 'string' },
    else: {
      type: 'object',
      additionalProperties: false,
      required: ['message'],
      properties: { message: { type: 'string' }, level: { enum: ['debug', 'info', 'warn', 'error'] } },
    },
  },
  example: 'tip of {{ event.amount }} from {{ event.sender.pin_code }}',
  effect: 'local',
  async run(args, ctx) {
    const a =
      typeof args === 'string'
        ? { message: args, level: 'info' as const }
        : (args as { message: string; level?: 'debug' | 'info' | 'warn' | 'error' });
    ctx.log[a.level ?? 'info']({ event: ctx.scope.event.event_id }, a.message);
    return { message: a.message };
  },
};

export const localActions: ActionDef[] = [set, wait, log];
