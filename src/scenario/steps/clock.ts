import { iso } from '../../clock/clock.js';
import { DURATION_PATTERN, parseDuration } from '../../util/duration.js';
import { StepFailure, type StepKind } from '../types.js';

interface ClockStep {
  clock: { advance?: string; set?: string };
}

export const CLOCK_NEEDS_EMBEDDED =
  'clock control needs the embedded server (a remote server runs on real time): run ' +
  'without --server, or wait with expect_event / eventually';

export const clockStep: StepKind<ClockStep> = {
  name: 'clock',
  description:
    'moves the virtual clock: every due job (UBI, bot schedules, waits) fires at its ' +
    'own time, in order, and the step returns when every effect has settled',
  embeddedOnly: CLOCK_NEEDS_EMBEDDED,
  schema: {
    properties: {
      clock: {
        type: 'object',
        additionalProperties: false,
        minProperties: 1,
        maxProperties: 1,
        properties: {
          advance: {
            type: 'string',
            pattern: DURATION_PATTERN,
            description: 'move forward by a duration: 90s, 2h, 2d, 1w',
          },
          set: { type: 'string', description: 'move forward to a time (ISO 8601, e.g. 2026-03-01T09:00:00Z)' },
        },
      },
    },
    required: ['clock'],
  },
  label: (s) => (s.clock.advance ? `clock advance ${s.clock.advance}` : `clock set ${s.clock.set}`),
  check(s, c) {
    if (s.clock.set !== undefined && !s.clock.set.includes('{{') && !Number.isFinite(Date.parse(s.clock.set)))
      c.problem(
        ['clock', 'set'],
        `expected a time in ISO 8601 like 2026-03-01T09:00:00Z, found ${JSON.stringify(s.clock.set)}`,
      );
    c.templates(s.clock, ['clock']);
  },
  async run(s, ctx) {
    if (s.clock.advance) {
      await ctx.target.wait(parseDuration(s.clock.advance)!);
    } else {
      const at = Date.parse(String(ctx.render(s.clock.set)));
      if (!Number.isFinite(at)) throw new StepFailure(`clock set: ${JSON.stringify(s.clock.set)} is not a time`);
      if (at < ctx.target.now())
        throw new StepFailure(
          `clock set: ${iso(at)} is before the scenario's time ${iso(ctx.target.now())}; the clock only moves forward`,
        );
      await ctx.target.advanceTo(at);
    }
    return { detail: `now ${iso(ctx.target.now())}` };
  },
};
