import { readFileSync } from 'node:fs';
import { OUTSIDE_HINT } from './project-root.js';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { hintFor, suggest } from '../util/suggest.js';
import { ajvProblems, locate, parseYaml, type FileProblem, type LocatedYaml } from '../util/yaml-errors.js';
import { MODIFIERS, type StepRegistry } from './step-registry.js';
import { topLevelSchema } from './schema.js';
import {
  conditionProblem,
  conditionVariables,
  isTemplate,
  templateConditionProblems,
  templateVariables,
} from './templates.js';
import type { CheckContext, Path, StepNode } from './types.js';

/** Variables every template may use, besides users, vars and captures. */
export const BUILTIN_VARS = ['users', 'mode', 'seed', 'run_id', 'now', 'now_ms', 'scenario'];
const LOOP_VARS = ['item', 'index'];
/** Keys a fragment file may have. */
const FRAGMENT_KEYS = ['description', 'params', 'steps'];

const ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
const stepValidators = new WeakMap<StepRegistry, Map<string, ValidateFunction>>();
let topLevel: ValidateFunction | undefined;
/** A scenario file's top-level validator, compiled at first use: not at every `serve` start. */
export function validateTopLevel(): ValidateFunction {
  topLevel ??= ajv.compile(topLevelSchema(true));
  return topLevel;
}

/** Shifts ajv errors of a sub-value so they point into the whole document. */
export function prefixErrors(errors: ErrorObject[] | null | undefined, path: Path): ErrorObject[] {
  const pre = path.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
  return (errors ?? []).map((e) => ({ ...e, instancePath: pre + e.instancePath }));
}

function validatorFor(registry: StepRegistry, kind: string): ValidateFunction {
  let map = stepValidators.get(registry);
  if (!map) stepValidators.set(registry, (map = new Map()));
  let v = map.get(kind);
  if (!v) map.set(kind, (v = ajv.compile(registry.stepSchema(registry.kinds.get(kind)!))));
  return v;
}

/** What the steps of one file (scenario or fragment) are checked against. */
export interface Scope {
  users: ReadonlySet<string>;
  /** Variable names known at this point (grows as steps declare captures). */
  known: Set<string>;
  /** Literal values of fragment parameters, to check `as: "{{ who }}"`. */
  literal: Record<string, unknown>;
  loopDepth: number;
  /** Fragment files being checked (a cycle is a problem). */
  stack: string[];
  remote: boolean;
}

/** Everything a check run collects. */
export interface Checker {
  registry: StepRegistry;
  problems: FileProblem[];
  /** Parsed fragments, by absolute path. */
  fragments: Map<string, { located?: LocatedYaml; value?: Record<string, any>; problems: FileProblem[] }>;
  /** Why a file may not be read (outside the project root), or undefined when it may. */
  refused?: (abs: string) => string | undefined;
}

/** Adds a problem once (a fragment used twice reports its own problems once). Internal. */
function push(ch: Checker, p: FileProblem): void {
  if (!ch.problems.some((q) => q.file === p.file && q.line === p.line && q.col === p.col && q.message === p.message))
    ch.problems.push(p);
}

function at(ch: Checker, y: LocatedYaml, path: Path, message: string, hint?: string, onKey = false): void {
  const pos = locate(y, path, onKey);
  push(ch, { file: y.file, line: pos.line, col: pos.col, path: path.map(String).join('.'), message, hint });
}

/**
 * Checks a list of steps: each step has exactly one kind, its keys match the kind's schema,
 * users and template variables exist, fragments resolve with their parameters. Returns the
 * step nodes the runner runs.
 */
export function checkSteps(ch: Checker, y: LocatedYaml, steps: unknown[], base: Path, scope: Scope): StepNode[] {
  const nodes: StepNode[] = [];
  steps.forEach((raw, i) => {
    const path = [...base, i];
    if (!raw || typeof raw !== 'object' || Array.isArray(raw))
      return at(ch, y, path, `expected a step (a mapping with one of ${ch.registry.names().join(', ')})`);
    const step = raw as Record<string, any>;
    const kinds = ch.registry.kindsOf(step);
    if (kinds.length === 0) return noKind(ch, y, step, path);
    if (kinds.length > 1)
      return at(
        ch,
        y,
        path,
        `a step has one kind; this one has ${kinds.map((k) => k.name).join(' and ')}`,
        'split it into two steps',
      );
    const kind = kinds[0]!;
    const validate = validatorFor(ch.registry, kind.name);
    if (!validate(step)) {
      for (const p of ajvProblems(y, prefixErrors(validate.errors, path)).map(plainDuration)) {
        const key = p.message.match(/^unknown key "(.+)"$/)?.[1];
        push(
          ch,
          key
            ? {
                ...p,
                hint: hintFor(
                  key,
                  Object.keys(ch.registry.stepSchema(kind).properties as object),
                  `keys of a ${kind.name} step`,
                ),
              }
            : p,
        );
      }
      return;
    }
    const node: StepNode = { raw: step, kind, located: y, path };
    const inner: Scope =
      step.repeat !== undefined || step.for_each !== undefined ? { ...scope, loopDepth: scope.loopDepth + 1 } : scope;
    const c = context(ch, y, path, inner, node);
    if (typeof step.if === 'string') c.condition(step.if, ['if']);
    if (step.for_each !== undefined) c.templates(step.for_each, ['for_each']);
    if (scope.remote && kind.embeddedOnly && step.if === undefined)
      c.problem([kind.name], `step ${i + 1} (${safeLabel(kind, step)}): ${kind.embeddedOnly}`, undefined, true);
    kind.check?.(step, c);
    nodes.push(node);
  });
  return nodes;
}

/**
 * A step with no kind: the misspelt key when there is one (`reqest:` next to `as:` — `as` is a
 * key of request steps, not the mistake), else which kind its keys belong to. Internal.
 */
function noKind(ch: Checker, y: LocatedYaml, step: Record<string, unknown>, path: Path): void {
  const names = ch.registry.names();
  const owners = (key: string) => names.filter((n) => n !== key && key in ch.registry.kinds.get(n)!.schema.properties);
  const unknown = Object.keys(step).filter((k) => !(k in MODIFIERS) && owners(k).length === 0);
  const typo = unknown.map((k) => ({ k, s: suggest(k, names) })).find((g) => g.s);
  if (typo) return at(ch, y, [...path, typo.k], `unknown key "${typo.k}"`, `did you mean "${typo.s}"?`, true);
  if (unknown.length)
    return at(
      ch,
      y,
      [...path, unknown[0]!],
      `unknown key "${unknown[0]}"`,
      `a step needs one of: ${names.join(', ')}`,
      true,
    );
  const theirs = [...new Set(Object.keys(step).flatMap(owners))];
  if (theirs.length) {
    const keys = Object.keys(step).filter((k) => !(k in MODIFIERS));
    const are = keys.length === 1 ? 'is a key' : 'are keys';
    return at(
      ch,
      y,
      path,
      `this step has no kind: ${keys.map((k) => `"${k}"`).join(', ')} ${are} of ` +
        `${theirs.map((t) => `a ${t}`).join(' or ')} step`,
      `add "${theirs[0]}:" to it`,
    );
  }
  return at(ch, y, path, 'a step needs a kind', `one of: ${names.join(', ')}`);
}

/** A duration pattern said in words. Internal. */
export function plainDuration(p: FileProblem): FileProblem {
  return p.message.includes('(ms|s|m|h|d|w)')
    ? { ...p, message: 'expected a duration like 500ms, 90s, 15m, 2h, 3d, 1w' }
    : p;
}

function safeLabel(kind: StepNode['kind'], step: Record<string, any>): string {
  try {
    return kind.label(step);
  } catch {
    return kind.name;
  }
}

/** The variables a template or condition of a step may name. Internal. */
const knownVars = (scope: Scope) => [...scope.known, ...BUILTIN_VARS, ...(scope.loopDepth ? LOOP_VARS : [])];

/** Each variable a template or condition names exists (a user, capture, var, parameter). Internal. */
function checkVars(
  ch: Checker,
  y: LocatedYaml,
  scope: Scope,
  vars: Array<Array<string | number>>,
  path: Path,
  text: string,
): void {
  for (const v of vars) {
    const root = String(v[0]);
    if (root === 'users') {
      if (v.length > 1 && v[1] !== '*' && !scope.users.has(String(v[1])))
        at(
          ch,
          y,
          path,
          `unknown user "${v[1]}" in ${JSON.stringify(text)}`,
          hintFor(String(v[1]), [...scope.users], 'users'),
        );
      continue;
    }
    if (!knownVars(scope).includes(root)) {
      const hint = hintFor(root, knownVars(scope), 'variables');
      at(
        ch,
        y,
        path,
        `unknown variable "${root}" in ${JSON.stringify(text)}: no capture, var or parameter has that name`,
        `${hint}; a capture exists from the step that saves it on`,
      );
    }
  }
}

/** Every template in a value (at `path`): valid, its conditions and variables checked. Internal. */
function checkTemplates(ch: Checker, y: LocatedYaml, scope: Scope, value: unknown, path: Path): void {
  if (typeof value === 'string' && isTemplate(value)) {
    let vars: Array<Array<string | number>>;
    try {
      vars = templateVariables(value);
    } catch (err) {
      return at(ch, y, path, `invalid template ${JSON.stringify(value)}: ${(err as Error).message.split('\n')[0]}`);
    }
    for (const bad of templateConditionProblems(value))
      at(ch, y, path, `invalid condition ${bad.tag}: ${bad.message}`, bad.hint);
    checkVars(ch, y, scope, vars, path, value);
  } else if (Array.isArray(value)) value.forEach((x, i) => checkTemplates(ch, y, scope, x, [...path, i]));
  else if (value && typeof value === 'object')
    for (const [k, x] of Object.entries(value)) checkTemplates(ch, y, scope, x, [...path, k]);
}

/** A condition (at `path`): parsed, read as written, its variables checked. Internal. */
function checkCondition(ch: Checker, y: LocatedYaml, scope: Scope, expr: string, path: Path): void {
  try {
    const vars = conditionVariables(expr);
    const bad = conditionProblem(expr);
    if (bad) return at(ch, y, path, `invalid condition ${JSON.stringify(expr)}: ${bad.message}`, bad.hint);
    checkVars(ch, y, scope, vars, path, expr);
  } catch (err) {
    at(ch, y, path, `invalid condition ${JSON.stringify(expr)}: ${(err as Error).message.split('\n')[0]}`);
  }
}

/** A user a step names (by name, or a template whose value is known): declared. Internal. */
function checkUser(ch: Checker, y: LocatedYaml, scope: Scope, name: unknown, path: Path): void {
  if (typeof name !== 'string') return;
  let literal: unknown = name;
  if (isTemplate(name)) {
    checkTemplates(ch, y, scope, name, path);
    const whole = /^\s*\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}\s*$/.exec(name);
    literal = whole ? scope.literal[whole[1]!] : undefined;
    if (typeof literal !== 'string' || isTemplate(literal)) return;
  }
  if (!scope.users.has(literal as string))
    at(
      ch,
      y,
      path,
      `unknown user "${literal}"`,
      `${hintFor(literal as string, [...scope.users], 'users')}; declare users under users:`,
    );
}

/** The CheckContext of one step. Internal. */
function context(ch: Checker, y: LocatedYaml, stepPath: Path, scope: Scope, node: StepNode): CheckContext {
  return {
    users: scope.users,
    remote: scope.remote,
    problem: (path, message, hint, onKey) => at(ch, y, [...stepPath, ...path], message, hint, onKey),
    templates: (value, path) => checkTemplates(ch, y, scope, value, [...stepPath, ...path]),
    condition: (expr, path) => checkCondition(ch, y, scope, expr, [...stepPath, ...path]),
    user: (name, path) => checkUser(ch, y, scope, name, [...stepPath, ...path]),
    declare: (name) => void scope.known.add(name),
    fragment: (file, withValues, path) => {
      const r = checkFragment(ch, y, [...stepPath, ...path], resolve(dirname(y.file), file), withValues, scope);
      if (r) Object.assign(node, r);
      return r;
    },
  };
}

/** A path as people read it: relative to the working directory when inside it. */
export function shown(file: string): string {
  const r = relative(process.cwd(), file);
  return r && !r.startsWith('..') && !isAbsolute(r) ? r : file;
}

/** Parses a fragment once. Internal. */
function parseFragment(ch: Checker, file: string) {
  let f = ch.fragments.get(file);
  if (f) return f;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    f = {
      problems: [],
      error: (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message,
    } as never;
    ch.fragments.set(file, f!);
    return f!;
  }
  const parsed = parseYaml(shown(file), text);
  f = { located: parsed.located, value: parsed.value as Record<string, any>, problems: parsed.problems };
  ch.fragments.set(file, f);
  return f;
}

/** Checks `use:` of one fragment with its `with:` values; returns its steps and parameters. Internal. */
function checkFragment(
  ch: Checker,
  y: LocatedYaml,
  usePath: Path,
  file: string,
  withValues: Record<string, unknown>,
  scope: Scope,
): { children: StepNode[]; params: StepNode['params'] } | undefined {
  const why = ch.refused?.(file);
  if (why) return void at(ch, y, usePath, `the fragment ${shown(file)} is not read: ${why}`, OUTSIDE_HINT);
  const f = parseFragment(ch, file) as ReturnType<typeof parseFragment> & { error?: string };
  if (f.error)
    return void at(
      ch,
      y,
      usePath,
      `cannot read the fragment ${shown(file)}: ${f.error}`,
      'the path is relative to this file',
    );
  if (scope.stack.includes(file))
    return void at(
      ch,
      y,
      usePath,
      `fragment ${shown(file)} uses itself (${[...scope.stack, file].map(shown).join(' → ')})`,
      'remove the cycle',
    );
  f.problems.forEach((p) => push(ch, p));
  if (f.problems.length || !f.located) return;
  const v = f.value;
  if (!v || typeof v !== 'object' || Array.isArray(v) || !Array.isArray(v.steps))
    return void at(
      ch,
      f.located,
      [],
      'a fragment is a mapping with steps (and params)',
      'see scenarios/fragments/ for an example',
    );
  for (const k of Object.keys(v))
    if (!FRAGMENT_KEYS.includes(k))
      at(
        ch,
        f.located,
        [k],
        `a fragment has only ${FRAGMENT_KEYS.join(', ')}; "${k}" belongs to a scenario`,
        'move it to the scenario that uses this fragment',
        true,
      );
  const top = validateTopLevel();
  if (!top(v)) return void ajvProblems(f.located, top.errors).forEach((p) => push(ch, p));
  const params: NonNullable<StepNode['params']> = {};
  if (Array.isArray(v.params)) for (const n of v.params) params[n] = { required: true };
  else
    for (const [n, spec] of Object.entries((v.params ?? {}) as Record<string, { default?: unknown } | null>))
      params[n] = spec && 'default' in spec ? { default: spec.default, required: false } : { required: true };
  for (const [n, p] of Object.entries(params))
    if (p.required && !(n in withValues))
      at(ch, y, usePath, `fragment ${shown(file)} needs the parameter "${n}"`, `add it: with: { ${n}: … }`);
  for (const n of Object.keys(withValues))
    if (!(n in params))
      at(
        ch,
        y,
        [...usePath.slice(0, -1), 'with', n],
        `fragment ${shown(file)} has no parameter "${n}"`,
        hintFor(n, Object.keys(params), 'parameters'),
        true,
      );
  const known = new Set([...scope.known, ...Object.keys(params)]);
  const literal: Record<string, unknown> = {};
  for (const n of Object.keys(params)) literal[n] = n in withValues ? withValues[n] : params[n]!.default;
  const inner: Scope = { ...scope, known, literal, stack: [...scope.stack, file] };
  const children = checkSteps(ch, f.located, v.steps, ['steps'], inner);
  // captures made inside the fragment are seen after it
  for (const k of known) if (!(k in params)) scope.known.add(k);
  return { children, params };
}
