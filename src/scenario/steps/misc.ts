import { conditionVariables, evalCondition } from '../templates.js';
import { StepFailure, type StepKind } from '../types.js';

/** `log: text` prints a line in the report (templates allowed). */
export const logStep: StepKind<{ log: unknown }> = {
  name: 'log',
  acts: false,
  description: 'writes a line to the report (templates allowed: "balance is {{ balance }}")',
  schema: { properties: { log: { description: 'text or any value' } }, required: ['log'] },
  label: () => 'log',
  check: (s, c) => c.templates(s.log, ['log']),
  async run(s, ctx) {
    const v = ctx.render(s.log);
    return { logs: [ctx.mask(typeof v === 'string' ? v : JSON.stringify(v))] };
  },
};

/** `set: { name: value }` defines variables for later steps. */
export const setStep: StepKind<{ set: Record<string, unknown> }> = {
  name: 'set',
  acts: false,
  description: 'defines variables for later steps (name → value; templates allowed)',
  schema: {
    properties: { set: { type: 'object', minProperties: 1, propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]*$' } } },
    required: ['set'],
  },
  label: (s) => `set ${Object.keys(s.set).join(', ')}`,
  check(s, c) {
    c.templates(s.set, ['set']);
    for (const k of Object.keys(s.set)) c.declare(k);
  },
  async run(s, ctx) {
    for (const [k, v] of Object.entries(s.set)) ctx.capture(k, ctx.render(v));
  },
};

export const RESTART_NEEDS_EMBEDDED = 'restart needs the embedded server: run without --server';

/**
 * `restart: true` stops the embedded server and its bots (in-flight work finishes, the store
 * writes its snapshot) and starts them again on the same data directory, port and clock, as
 * an operator's restart would: what was durable is there, nothing is done twice.
 */
export const restartStep: StepKind<{ restart: true }> = {
  name: 'restart',
  description:
    'restarts the embedded server and its bots on the same data directory (same port ' +
    'and clock): what was stored survives, nothing is done twice',
  embeddedOnly: RESTART_NEEDS_EMBEDDED,
  schema: { properties: { restart: { const: true, description: 'true' } }, required: ['restart'] },
  label: () => 'restart the server',
  async run(_s, ctx) {
    await ctx.target.restart();
  },
};

/** `assert: "balance > 5"` fails the scenario when the expression does not hold. */
export const assertStep: StepKind<{ assert: string }> = {
  name: 'assert',
  acts: false,
  description:
    'fails unless a Liquid expression over the variables holds: tx_amount == 5, now == "2026-01-02T09:00:00.000Z"',
  schema: { properties: { assert: { type: 'string', minLength: 1 } }, required: ['assert'] },
  label: (s) => `assert ${s.assert}`,
  check: (s, c) => c.condition(s.assert, ['assert']),
  async run(s, ctx) {
    if (!evalCondition(s.assert, ctx.scope)) {
      const vars = Object.fromEntries(
        conditionVariables(s.assert).map((p) => [
          p.join('.'),
          p.reduce<unknown>(
            (o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[String(k)] : undefined),
            ctx.scope,
          ),
        ]),
      );
      throw new StepFailure(`assert ${s.assert} does not hold`, {
        diff: Object.entries(vars)
          .map(([k, v]) => `  ${k} = ${ctx.mask(JSON.stringify(v) ?? 'undefined')}`)
          .join('\n'),
      });
    }
  },
};
