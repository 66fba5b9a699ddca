import {
  sandboxedLiquid,
  expressionProblem,
  tagExpressionProblems,
  type ExpressionProblem,
  type ExpressionWhere,
} from '../runtime/index.js';

/**
 * Templates in scenario values: `"{{ users.alice.pin_code }}"`, `"tip {{ tx }}"`, with Liquid
 * filters (`{{ amount | times: 2 }}`). A string that is exactly one `{{ … }}` keeps the type of
 * its value (a number stays a number), so `amount: "{{ tip }}"` sends a number.
 *
 * Sandboxed as bot templates are (runtime/liquid/templates.ts): a scenario is shared between
 * people, and `{% include 'config.yaml' %}` reads no file.
 *
 * @example render({ amount: '{{ tip }}' }, { tip: 5 }) // { amount: 5 }
 */
const liquid = sandboxedLiquid('scenario', { strictVariables: true });

const WHOLE = /^\s*\{\{-?\s*([\s\S]*?)\s*-?\}\}\s*$/;

/** True when a string holds a template. Internal. */
export function isTemplate(s: string): boolean {
  return s.includes('{{') || s.includes('{%');
}

/** Renders every string of a value (deeply). Throws with the template named when a variable is unknown. */
export function render(value: unknown, scope: Record<string, unknown>): unknown {
  if (typeof value === 'string') return renderString(value, scope);
  if (Array.isArray(value)) return value.map((v) => render(v, scope));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = render(v, scope);
    return out;
  }
  return value;
}

/** Renders one string: a whole `{{ x }}` keeps x's type, anything else is text. */
export function renderString(s: string, scope: Record<string, unknown>): unknown {
  if (!isTemplate(s)) return s;
  try {
    const whole = WHOLE.exec(s);
    if (whole && !whole[1]!.includes('}}') && !whole[1]!.includes('{{')) return liquid.evalValueSync(whole[1]!, scope);
    return liquid.parseAndRenderSync(s, scope);
  } catch (err) {
    throw new Error(`template ${JSON.stringify(s)}: ${firstLine(err)}`);
  }
}

/** Evaluates an `if:` expression (Liquid: `tip > 5 and mode == "embedded"`) to a boolean. */
export function evalCondition(expr: string | boolean, scope: Record<string, unknown>): boolean {
  if (typeof expr === 'boolean') return expr;
  const inner = WHOLE.exec(expr)?.[1] ?? expr;
  // fail closed: a form Liquid reads otherwise than written never holds (validation refuses it)
  const bad = expressionProblem(liquid, inner, SCENARIO_EXPRESSIONS);
  if (bad) throw new Error(`if ${JSON.stringify(expr)}: ${bad.message} — ${bad.hint}`);
  try {
    const v = liquid.evalValueSync(inner, scope);
    return v !== false && v !== null && v !== undefined;
  } catch (err) {
    throw new Error(`if ${JSON.stringify(expr)}: ${firstLine(err)}`);
  }
}

/** How scenario files compute a value before comparing it, or split a condition. */
const SCENARIO_EXPRESSIONS: ExpressionWhere = {
  computeFirst:
    'compute the value first in a set: step (set: { limit: "{{ limit | default: 20 ' +
    '}}" }), then compare the variable: amount < limit',
  split: 'split it into two assert steps, or compute a part first in a set: step',
};

/** What is wrong with an `assert:` / `if:` expression that Liquid would read otherwise than written. */
export function conditionProblem(expr: string): ExpressionProblem | undefined {
  return expressionProblem(liquid, WHOLE.exec(expr)?.[1] ?? expr, SCENARIO_EXPRESSIONS);
}

/** The same for the `{% if %}` / `{% elsif %}` / `{% unless %}` tags of a template. */
export function templateConditionProblems(text: string): Array<ExpressionProblem & { tag: string }> {
  return tagExpressionProblems(liquid, text, SCENARIO_EXPRESSIONS);
}

/**
 * The variables a template refers to, as paths (`[['users','alice','pin_code'], ['tx']]`), for
 * validation before anything runs; throws on a template that does not parse.
 */
export function templateVariables(s: string): Array<Array<string | number>> {
  const segs = liquid.globalVariableSegmentsSync(s) as unknown as Array<Array<string | number | unknown>>;
  // a segment looked up through another variable (users[to]) is not known before running: '*'
  return segs.map((p) => p.map((x) => (typeof x === 'string' || typeof x === 'number' ? x : '*')));
}

/** The variables of an `if:` expression. */
export function conditionVariables(expr: string): Array<Array<string | number>> {
  const inner = WHOLE.exec(expr)?.[1] ?? expr;
  return templateVariables(`{% if ${inner} %}{% endif %}`);
}

function firstLine(err: unknown): string {
  return String((err as Error)?.message ?? err)
    .split('\n')[0]!
    .replace(/, line:\d+, col:\d+/, '');
}
