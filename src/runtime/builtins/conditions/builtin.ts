import { normalizePin } from '../../../util/pin.js';
import { checkExpression, evaluate, liquid, truthy } from '../../liquid/templates.js';
import { assertVariables, checkPaths, expressionPaths, pathText, valueAt } from '../../liquid/template-check.js';
import { BOT_EXPRESSIONS, expressionProblem } from '../../liquid/expression-check.js';
import type { CheckProblem, ConditionDef, ConditionResult } from '../../contract/types.js';

const PIN = '^\\s*[A-Za-z0-9]{6}\\s*$';

/** `from`: who caused the event — a list of PINs, and/or `contacts` (the bot's contacts). */
const from: ConditionDef = {
  name: 'from',
  description:
    'The user who caused the event (sender, requester, introducer…) is one of these ' +
    "PINs, or — with `contacts` — one of the bot's contacts.",
  schema: {
    if: { type: 'string' },
    then: { enum: ['contacts'], description: '"contacts": only the bot\'s contacts' },
    else: {
      type: 'array',
      minItems: 1,
      items: { type: 'string', anyOf: [{ const: 'contacts' }, { pattern: PIN }] },
      description: 'PINs (and/or "contacts")',
    },
  },
  example: ['ABC123', 'contacts'],
  check(value, ctx) {
    const problems: CheckProblem[] = ctx.triggers
      .filter((t) => !t.actor)
      .map((t) => ({
        path: [],
        message: `${t.name} events have no sender, so from: never holds`,
        hint: 'remove from:, or use it with a trigger that has a sender',
      }));
    const list = typeof value === 'string' ? [value] : (value as string[]);
    list.forEach((p, i) => {
      const at = typeof value === 'string' ? [] : [i];
      if (typeof p === 'number')
        problems.push({
          path: at,
          message: `${p} is a number, not a PIN`,
          hint:
            `quote PINs made of digits, e.g. from: ["${String(p).padStart(6, '0')}"] ` +
            `(YAML reads 012345 as the number 12345)`,
        });
      else if (p !== 'contacts' && !new RegExp(PIN).test(p))
        problems.push({
          path: at,
          message: `"${p}" is not a PIN`,
          hint: 'a PIN is 6 letters or digits, or write "contacts"',
        });
    });
    return problems;
  },
  compile(value) {
    const list = typeof value === 'string' ? [value] : (value as string[]);
    const pins = new Set(list.filter((p) => p !== 'contacts').map(normalizePin));
    const contacts = list.includes('contacts');
    const label = `from ${list.join(', ')}`;
    return async (ctx) => {
      const who = ctx.trigger.actor?.(ctx.scope.event, ctx.scope.me);
      if (!who) return { ok: false, label, detail: 'the event has no sender' };
      if (pins.has(who.pin_code)) return { ok: true, label, detail: `${who.pin_code} is listed` };
      if (contacts && (await ctx.isContact(who.pin_code)))
        return { ok: true, label, detail: `${who.pin_code} is a contact` };
      return {
        ok: false,
        label,
        detail: `${who.pin_code} (${who.display_name}) is ${contacts ? 'not a contact and ' : ''}not listed`,
      };
    };
  },
};

const list = (
  name: string,
  word: string,
  description: string,
  combine: (r: ConditionResult[]) => boolean,
): ConditionDef => ({
  name,
  description,
  schema: { type: 'array', minItems: 1, items: { $ref: '#/definitions/condition' } },
  example: [{ amount: { min: 1 } }, { from: 'contacts' }],
  check: (value, ctx) => (value as unknown[]).flatMap((c, i) => ctx.check(c, [i])),
  compile(value, compiler) {
    const parts = (value as unknown[]).map((c) => compiler.compile(c));
    return async (ctx) => {
      const children: ConditionResult[] = [];
      for (const p of parts) children.push(await p(ctx));
      return { ok: combine(children), label: word, children };
    };
  },
});

/** `not`: none of the conditions hold (one condition, or a list). */
const not: ConditionDef = {
  name: 'not',
  description: 'None of the given conditions holds (one condition mapping, or a list of them).',
  schema: { $ref: '#/definitions/conditions' },
  example: { from: 'contacts' },
  check: (value, ctx) => ctx.check(value, []),
  compile(value, compiler) {
    const inner = compiler.compile(value);
    return async (ctx) => {
      const r = await inner(ctx);
      return { ok: !r.ok, label: 'not', children: [r] };
    };
  },
};

/** `liquid`: a Liquid expression over the event, vars… (`event.amount > vars.limit`). */
const liquidCondition: ConditionDef = {
  name: 'liquid',
  description: 'A Liquid expression over event, vars, bot, me and wallet holds (anything but false, nil or empty).',
  schema: { type: 'string', minLength: 1, description: 'e.g. "event.amount > vars.threshold and vars.open"' },
  example: 'event.amount > vars.threshold',
  check(value, ctx) {
    const expr = String(value);
    const parse = checkExpression(expr);
    if (parse)
      return [
        {
          path: [],
          message: `Liquid expression error: ${parse.message}`,
          hint: 'write an expression without {{ }}, e.g. event.amount > 5 and vars.open',
        },
      ];
    const bad = expressionProblem(liquid, expr, BOT_EXPRESSIONS);
    if (bad) return [{ path: [], message: `Liquid expression error: ${bad.message}`, hint: bad.hint }];
    return checkPaths(expressionPaths(expr), ctx.triggers, [], expr);
  },
  compile(value) {
    const expr = String(value);
    const label = `liquid ${expr}`;
    // fail closed: a form Liquid would read otherwise than written (a file not validated by this
    // version) does not hold; neither does one whose evaluation throws
    const bad = checkExpression(expr) ?? expressionProblem(liquid, expr, BOT_EXPRESSIONS);
    return async (ctx) => {
      if (bad) return { ok: false, label, detail: `not evaluated: ${bad.message}` };
      const paths = expressionPaths(expr);
      assertVariables(expr, paths, ctx.scope, ctx.trigger.name);
      let v: unknown;
      try {
        v = await evaluate(expr, ctx.scope);
      } catch (err) {
        return {
          ok: false,
          label,
          detail: `could not be evaluated: ${String((err as Error)?.message ?? err).split('\n')[0]}`,
        };
      }
      // a division by zero is Infinity, which Liquid would call true
      if (typeof v === 'number' && !Number.isFinite(v))
        return { ok: false, label, detail: `could not be evaluated: the result is ${v}, not a number` };
      // what the expression saw, so a false one can be understood from its trace
      const seen = paths.map((p) => `${pathText(p)} = ${JSON.stringify(valueAt(ctx.scope, p) ?? null)}`);
      return {
        ok: truthy(v),
        label,
        detail: `${seen.length ? `${seen.join(', ')} → ` : ''}${JSON.stringify(v ?? null)}`,
      };
    };
  },
};

/** Every built-in condition (field matchers are the fallback for other keys). */
export const builtinConditions: ConditionDef[] = [
  from,
  list('all', 'all', 'Every one of the listed conditions holds.', (r) => r.every((x) => x.ok)),
  list('any', 'any', 'At least one of the listed conditions holds.', (r) => r.some((x) => x.ok)),
  not,
  liquidCondition,
];
