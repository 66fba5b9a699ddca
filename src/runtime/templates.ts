import { Liquid, type Template } from 'liquidjs';

/**
 * The Liquid engine of bot templates: sandboxed (no JavaScript, own properties only, so no
 * `constructor` or prototype tricks), unknown filters are errors, and parse/render/memory are
 * bounded so one template cannot stall the process.
 */
export const liquid = new Liquid({
  ownPropertyOnly: true,
  strictFilters: true,
  strictVariables: false,
  parseLimit: 100_000,
  renderLimit: 2_000,
  memoryLimit: 10_000_000,
  cache: 1_000,
});

const parsed = new Map<string, Template[]>();

/** True when `s` contains Liquid markup. */
export function isTemplate(s: string): boolean {
  return s.includes('{{') || s.includes('{%');
}

/** Where a template is wrong, as the text says it. Internal. */
function errorOf(err: unknown): { message: string; line?: number; col?: number } {
  const e = err as { message?: string; token?: { getPosition?: () => [number, number] } };
  const pos = e.token?.getPosition?.();
  const message = String(e.message ?? err).replace(/, line:\d+, col:\d+$/, '');
  return { message, line: pos?.[0], col: pos?.[1] };
}

/** Parses a template once (checks syntax and filter names); undefined when it is fine. */
export function checkTemplate(text: string): { message: string; line?: number; col?: number } | undefined {
  try {
    parse(text);
    return undefined;
  } catch (err) {
    return errorOf(err);
  }
}

/** Parses a Liquid expression (`event.amount > 5 and vars.on`) once; undefined when fine. */
export function checkExpression(expr: string): { message: string } | undefined {
  try {
    parse(`{{ ${expr} }}`);
    return undefined;
  } catch (err) {
    return { message: errorOf(err).message };
  }
}

function parse(text: string): Template[] {
  let t = parsed.get(text);
  if (!t) {
    t = liquid.parse(text);
    if (parsed.size > 10_000) parsed.clear();
    parsed.set(text, t);
  }
  return t;
}

/**
 * Renders one template over `scope` (plain strings come back as they are).
 *
 * @example await render('Thanks {{ event.sender.display_name }}!', scope)
 */
export async function render(text: string, scope: object): Promise<string> {
  if (!isTemplate(text)) return text;
  return String(await liquid.render(parse(text), scope));
}

/** Renders every string inside `value` (objects and arrays are walked). */
export async function renderDeep(value: unknown, scope: object): Promise<unknown> {
  if (typeof value === 'string') return render(value, scope);
  if (Array.isArray(value)) return Promise.all(value.map((v) => renderDeep(v, scope)));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = await renderDeep(v, scope);
    return out;
  }
  return value;
}

/** Evaluates a Liquid expression to a value (filters allowed), e.g. for `liquid:` conditions. */
export async function evaluate(expr: string, scope: object): Promise<unknown> {
  return liquid.evalValue(expr, scope);
}

/** Liquid's truthiness: only `false`, `nil` (and empty strings, for people) are false. */
export function truthy(v: unknown): boolean {
  return !(v === false || v === null || v === undefined || v === '');
}
