import { Liquid, Tag, type FS, type Template } from './liquidjs.js';

/** The Liquid tags that read files; bot templates have none of them. */
export const FILE_TAGS = ['include', 'render', 'layout'] as const;

const refuse = (what: string, whose = 'bot') => new Error(`${whose} templates cannot read files (${what})`);

/**
 * A file system that has no files: every lookup misses and every read throws. Liquid's default
 * reads the process's working directory (config.yaml, data/bots/keys, the journal). Internal.
 */
function noFiles(whose: string): FS {
  return {
    exists: async () => false,
    existsSync: () => false,
    readFile: async (file) => Promise.reject(refuse(file, whose)),
    readFileSync: (file) => {
      throw refuse(file, whose);
    },
    resolve: (_dir, file) => file,
    contains: async () => false,
    containsSync: () => false,
    sep: '/',
  };
}

/**
 * A sandboxed Liquid engine: no JavaScript, own properties only (so no `constructor` or
 * prototype tricks), no file system (`include`, `render` and `layout` are parse errors, and the
 * file system beneath them has no files), unknown filters are errors, and parse/render/memory
 * are bounded so one template cannot stall the process. `options` may add to it (scenarios
 * make unknown variables errors) but never give a file system back.
 *
 * @example const engine = sandboxedLiquid('scenario', { strictVariables: true });
 */
export function sandboxedLiquid(whose = 'bot', options: { strictVariables?: boolean } = {}): Liquid {
  const engine = new Liquid({
    strictVariables: false,
    ...options,
    fs: noFiles(whose),
    root: [],
    partials: [],
    layouts: [],
    relativeReference: false,
    ownPropertyOnly: true,
    strictFilters: true,
    parseLimit: 100_000,
    renderLimit: 2_000,
    memoryLimit: 10_000_000,
    cache: 1_000,
  });
  for (const name of FILE_TAGS) {
    engine.registerTag(
      name,
      class extends Tag {
        constructor(...args: ConstructorParameters<typeof Tag>) {
          super(...args);
          throw new Error(`{% ${name} %} is not available: ${whose} templates cannot read files`);
        }
        render(): never {
          throw refuse(name, whose);
        }
      },
    );
  }
  return engine;
}

/** The Liquid engine of bot templates (sandboxedLiquid). */
export const liquid = sandboxedLiquid();

const parsed = new Map<string, Template[]>();

/** True when `s` contains Liquid markup. */
export function isTemplate(s: string): boolean {
  return s.includes('{{') || s.includes('{%');
}

/** A template's problem: the message, where in the template, and the offending markup. */
export interface TemplateProblem {
  message: string;
  line?: number;
  col?: number;
  /** The markup at fault as written (`{% include 'x' %}`), to find it in the file. */
  text?: string;
}

/** Where a template is wrong, as the text says it. Internal. */
function errorOf(err: unknown): TemplateProblem {
  const e = err as { message?: string; token?: { getPosition?: () => [number, number]; getText?: () => string } };
  const pos = e.token?.getPosition?.();
  const message = String(e.message ?? err).replace(/, line:\d+, col:\d+$/, '');
  return { message, line: pos?.[0], col: pos?.[1], text: e.token?.getText?.() };
}

/** Parses a template once (checks syntax, filter names, file tags); undefined when it is fine. */
export function checkTemplate(text: string): TemplateProblem | undefined {
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
 * Whether a template (or expression) may read a value that is a promise: `wallet` (the balance,
 * fetched on first use) is the one such value of a run's scope. Only those are rendered
 * asynchronously; every filter and every other value is synchronous, and Liquid's synchronous
 * render gives the same text at a tenth of the cost (bench bots-throughput). Judged by the text:
 * `wallet` named anywhere in it (a path, an `assign`, a loop) renders asynchronously; a name
 * built at run time (`"wal" | append: "let"`) reads nothing there (it renders empty). Internal.
 */
const readsPromise = (text: string) => text.includes('wallet');

/**
 * Renders one template over `scope` (plain strings come back as they are).
 *
 * @example await render('Thanks {{ event.sender.display_name }}!', scope)
 */
export async function render(text: string, scope: object): Promise<string> {
  if (!isTemplate(text)) return text;
  const t = parse(text);
  return String(readsPromise(text) ? await liquid.render(t, scope) : liquid.renderSync(t, scope));
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
  return readsPromise(expr) ? liquid.evalValue(expr, scope) : liquid.evalValueSync(expr, scope);
}

/** Liquid's truthiness: only `false`, `nil` (and empty strings, for people) are false. */
export function truthy(v: unknown): boolean {
  return !(v === false || v === null || v === undefined || v === '');
}
