import { parseDuration } from '../../util/duration.js';
import { checkConditions } from './conditions.js';
import type { Registry } from '../contract/registry.js';
import { hintFor } from '../../util/suggest.js';
import { checkTemplate, FILE_TAGS, isTemplate, liquid } from '../liquid/templates.js';
import { BOT_EXPRESSIONS, tagExpressionProblems } from '../liquid/expression-check.js';
import { checkPaths, expressionPaths, templatePaths, templatesIn } from '../liquid/template-check.js';
import { expectGroups } from './ask-expect.js';
import type { ActionDef, CheckProblem, TriggerDef } from '../contract/types.js';
import { hasConversation, hasPerson } from '../contract/memory-subjects.js';

type Path = Array<string | number>;
const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The triggers of a rule's `on:` with the path of each. Internal, shared with the compiler. */
export function triggerEntries(
  on: unknown,
  base: Path,
): Array<{ name: string; options: unknown; path: Path; form: 'bare' | 'options' }> {
  const list: Array<[unknown, Path]> = Array.isArray(on) ? on.map((t, i) => [t, [...base, i]]) : [[on, base]];
  const out: Array<{ name: string; options: unknown; path: Path; form: 'bare' | 'options' }> = [];
  for (const [t, p] of list) {
    if (typeof t === 'string') out.push({ name: t, options: undefined, path: p, form: 'bare' });
    else if (isObj(t) && Object.keys(t).length === 1) {
      const [name, options] = Object.entries(t)[0]!;
      out.push({ name, options, path: [...p, name], form: 'options' });
    }
  }
  return out;
}

/** The action of a step and its arguments (`- accept`, `- reply: "hi"`). Internal. */
export function stepEntry(step: unknown): { name: string; args: unknown; extra: string[] } | undefined {
  if (typeof step === 'string') return { name: step, args: undefined, extra: [] };
  if (!isObj(step)) return undefined;
  const keys = Object.keys(step).filter((k) => k !== 'continue_on_error');
  if (keys.length === 0) return undefined;
  return { name: keys[0]!, args: step[keys[0]!], extra: keys.slice(1) };
}

/** Template errors in every string of `value`, and variables the rule's events do not have. */
function checkTemplates(value: unknown, path: Path, triggers: TriggerDef[]): CheckProblem[] {
  if (typeof value === 'string') {
    if (!isTemplate(value)) return [];
    const bad = checkTemplate(value);
    if (!bad) {
      const tags = tagExpressionProblems(liquid, value, BOT_EXPRESSIONS).map((p) => ({
        path,
        find: p.tag,
        message: `Liquid template error: ${p.tag} (template line ${p.line}, col ${p.col}): ${p.message}`,
        hint: p.hint,
      }));
      return [...tags, ...checkPaths(templatePaths(value), triggers, [], value).map((p) => ({ ...p, path }))];
    }
    const where = bad.line ? ` (template line ${bad.line}, col ${bad.col})` : '';
    const fileTag = FILE_TAGS.find((t) => bad.message.startsWith(`{% ${t} %}`));
    const hint = fileTag
      ? 'write the text into the template itself, or keep it in vars: (see docs/bots.md "Templates")'
      : 'see docs/bots.md "Templates" for the filters and variables';
    return [{ path, find: bad.text, message: `Liquid template error: ${bad.message}${where}`, hint }];
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => checkTemplates(v, [...path, i], triggers));
  if (isObj(value)) return Object.entries(value).flatMap(([k, v]) => checkTemplates(v, [...path, k], triggers));
  return [];
}

function checkNeeds(action: ActionDef, triggers: TriggerDef[], path: Path): CheckProblem[] {
  const out: CheckProblem[] = [];
  for (const t of triggers) {
    if (action.needs === 'subject' && !t.subject) {
      out.push({
        path,
        message: `${action.name} needs an event with something to ${action.name}, and ${t.name} has none`,
        hint: 'use it with transfer.received, introduction.received or contact_request.received',
      });
    }
    if (action.needs === 'reply' && !t.replyTo) {
      const whom = action.name === 'ask' ? 'ask' : 'reply to';
      const hint =
        action.name === 'ask'
          ? 'ask in a rule on message.received (or another event someone caused); a ' +
            'schedule or startup has nobody to answer'
          : 'use send_message: { to: PIN, content: "…" }';
      out.push({
        path,
        message: `${action.name} needs an event with someone to ${whom}, and ${t.name} has none`,
        hint,
      });
    }
  }
  return out;
}

/** A step writing memory needs an event about a person (or in a conversation). Internal. */
function checkMemoryNeeds(action: ActionDef, args: unknown, triggers: TriggerDef[], path: Path): CheckProblem[] {
  const whose = action.needsMemory?.(args);
  if (!whose) return [];
  const lacking = triggers.filter((t) => (whose === 'person' ? !hasPerson(t) : !hasConversation(t)));
  return lacking.map((t) => ({
    path,
    message:
      whose === 'person'
        ? `${action.name} writes the memory of the person an event is about, and ${t.name} events are about no person`
        : `${action.name} with in: conversation writes a conversation's memory, and ` +
          `${t.name} events are in no conversation`,
    hint:
      whose === 'person'
        ? 'use it with message.received, transfer.*, introduction.*, ' +
          'contact_request.received or contact.added; keep what belongs to the bot in ' +
          'vars: (set)'
        : 'use it with message.received (or introduction.completed); or remember for the person',
  }));
}

/** `answers.X` read where no earlier `ask` saves X (with "did you mean"). Internal. */
function checkAnswers(value: unknown, path: Path, saves: Set<string>, expression = false): CheckProblem[] {
  const out: CheckProblem[] = [];
  // a template that does not parse is reported by checkTemplates
  const pathsOf = (f: () => ReturnType<typeof templatePaths>) => {
    try {
      return f();
    } catch {
      return [];
    }
  };
  const found =
    expression && typeof value === 'string'
      ? [{ text: value, path: [] as Path, paths: pathsOf(() => expressionPaths(value)) }]
      : templatesIn(value).map((t) => ({ ...t, paths: pathsOf(() => templatePaths(t.text)) }));
  for (const t of found) {
    for (const p of t.paths) {
      if (p[0] !== 'answers' || typeof p[1] !== 'string' || saves.has(p[1])) continue;
      const hint = saves.size
        ? hintFor(p[1], [...saves], 'answers saved before this step')
        : 'add save: NAME to an ask before this step';
      out.push({
        path: [...path, ...t.path],
        find: `answers.${p[1]}`,
        message: `answers.${p[1]}: no ask before this step saves "${p[1]}"`,
        hint,
      });
    }
  }
  return out;
}

/** `liquid:` conditions inside an `if:` (any depth), with their paths. Internal. */
function liquidsIn(value: unknown, path: Path): Array<{ text: string; path: Path }> {
  if (Array.isArray(value)) return value.flatMap((v, i) => liquidsIn(v, [...path, i]));
  if (!isObj(value)) return [];
  return Object.entries(value).flatMap(([k, v]) =>
    k === 'liquid' && typeof v === 'string' ? [{ text: v, path: [...path, k] }] : liquidsIn(v, [...path, k]),
  );
}

/** The names an `ask` saves into `answers` (its `save`, the named groups of its pattern). */
function savesOf(args: unknown): string[] {
  if (!isObj(args)) return [];
  return [...(typeof args.save === 'string' ? [args.save] : []), ...expectGroups(args.expect)];
}

/** Every name the asks of a list save (nested branches included): what on_error / on_timeout / on_cancel may read. */
function allSaves(list: unknown): Set<string> {
  const out = new Set<string>();
  const walk = (steps: unknown) => {
    for (const step of Array.isArray(steps) ? steps : []) {
      const e = stepEntry(step);
      if (e?.name === 'ask') for (const n of savesOf(e.args)) out.add(n);
      if (e?.name === 'choose' && Array.isArray(e.args)) for (const b of e.args) if (isObj(b)) walk(b.do), walk(b.else);
    }
  };
  walk(list);
  return out;
}

/** Checks a list of steps (a rule's `do`, its `on_error`, a `choose` branch), nested steps included. */
function checkSteps(
  list: unknown,
  base: Path,
  triggers: TriggerDef[],
  registry: Registry,
  saves: Set<string> = new Set(),
): CheckProblem[] {
  const out: CheckProblem[] = [];
  const steps = Array.isArray(list) ? list : [];
  steps.forEach((step, j) => {
    const at = [...base, j];
    const entry = stepEntry(step);
    if (!entry) return;
    const action = registry.actions.get(entry.name);
    const argPath = typeof step === 'string' ? at : [...at, entry.name];
    if (!action) {
      out.push({
        path: argPath,
        onKey: typeof step !== 'string',
        message: `unknown action "${entry.name}"`,
        hint: registry.whyUnavailable(entry.name) ?? hintFor(entry.name, [...registry.actions.keys()], 'actions'),
      });
      return;
    }
    if (entry.extra.length)
      out.push({
        path: [...at, entry.extra[0]!],
        onKey: true,
        message: `a step has exactly one action; this one also has ${entry.extra.join(', ')}`,
        hint: 'split it into one step per action',
      });
    if (typeof step === 'string' && !action.bare)
      out.push({ path: at, message: `${action.name} needs arguments`, hint: `write - ${action.name}: …` });
    if (typeof step !== 'string') {
      out.push(...(action.check?.(entry.args) ?? []).map((p) => ({ ...p, path: [...argPath, ...p.path] })));
      if (action.templated !== false) out.push(...checkTemplates(entry.args, argPath, triggers));
      if (action.templated !== false) out.push(...checkAnswers(entry.args, argPath, saves));
    }
    if (entry.name === 'ask') for (const n of savesOf(entry.args)) saves.add(n);
    out.push(...checkNeeds(action, triggers, argPath));
    out.push(...checkMemoryNeeds(action, entry.args, triggers, argPath));
    if (entry.name === 'choose' && Array.isArray(entry.args)) {
      entry.args.forEach((branch, k) => {
        if (!isObj(branch)) return;
        if (branch.if !== undefined) out.push(...checkConditions(registry, branch.if, triggers, [...argPath, k, 'if']));
        for (const l of liquidsIn(branch.if, [...argPath, k, 'if']))
          out.push(...checkAnswers(l.text, l.path, saves, true));
        for (const key of ['do', 'else'])
          if (branch[key] !== undefined)
            out.push(...checkSteps(branch[key], [...argPath, k, key], triggers, registry, saves));
      });
    }
  });
  return out;
}

function checkRule(rule: Record<string, unknown>, base: Path, registry: Registry): CheckProblem[] {
  const out: CheckProblem[] = [];
  const triggers: TriggerDef[] = [];
  for (const t of triggerEntries(rule.on, [...base, 'on'])) {
    const def = registry.triggers.get(t.name);
    if (!def) {
      out.push({
        path: t.path,
        onKey: t.form === 'options',
        message: `unknown trigger "${t.name}"`,
        hint: registry.whyUnavailable(t.name) ?? hintFor(t.name, [...registry.triggers.keys()], 'triggers'),
      });
      continue;
    }
    triggers.push(def);
    if (t.form === 'bare' && def.optionsRequired)
      out.push({
        path: t.path,
        message: `${def.name} needs options`,
        hint: `write on: { ${def.name}: … }, e.g. on: { schedule: "0 9 * * 1-5" }`,
      });
    if (t.form === 'options' && !def.options)
      out.push({ path: t.path, onKey: true, message: `${def.name} takes no options`, hint: `write on: ${def.name}` });
    if (t.form === 'options' && def.options)
      out.push(...(def.check?.(t.options) ?? []).map((p) => ({ ...p, path: [...t.path, ...p.path] })));
  }
  if (rule.if !== undefined) out.push(...checkConditions(registry, rule.if, triggers, [...base, 'if']));
  out.push(...checkSteps(rule.do, [...base, 'do'], triggers, registry));
  for (const key of ['on_error', 'on_timeout', 'on_cancel']) {
    if (rule[key] !== undefined)
      out.push(...checkSteps(rule[key], [...base, key], triggers, registry, allSaves(rule.do)));
  }
  if (
    (rule.on_timeout !== undefined || rule.on_cancel !== undefined) &&
    allSaves(rule.do).size === 0 &&
    !JSON.stringify(rule.do ?? null).includes('"ask"')
  ) {
    const key = rule.on_timeout !== undefined ? 'on_timeout' : 'on_cancel';
    out.push({
      path: [...base, key],
      onKey: true,
      warning: true,
      message: `${key} runs only when a dialog of this rule ends so, and the rule has no ask`,
      hint: 'add an ask: step to do:, or remove it',
    });
  }
  return out;
}

/**
 * send_money whose recipient or amount comes from the event (a template) can be steered by
 * whoever causes the event: without limits, nothing bounds what it pays. A warning. Internal.
 */
function moneyWarnings(spec: Record<string, unknown>, rules: unknown[]): CheckProblem[] {
  const limits = isObj(spec.limits) ? spec.limits : {};
  if (limits.max_per_transfer !== undefined || limits.max_per_day !== undefined || limits.send_to !== undefined)
    return [];
  const out: CheckProblem[] = [];
  rules.forEach((rule, i) => {
    if (!isObj(rule) || !Array.isArray(rule.do)) return;
    rule.do.forEach((step, j) => {
      const e = stepEntry(step);
      const args = e?.args;
      if (e?.name !== 'send_money' || !isObj(args)) return;
      const steered = ['to', 'amount'].filter((k) => typeof args[k] === 'string' && isTemplate(args[k] as string));
      if (steered.length) {
        out.push({
          path: ['rules', i, 'do', j, 'send_money'],
          warning: true,
          message:
            `send_money takes its ${steered.join(' and ')} from a template and the bot ` +
            `has no limits: whoever causes the event decides what it pays`,
          hint:
            'add limits: { max_per_transfer: 5, max_per_day: 20 } (and send_to: [PIN…] ' +
            'to allow only some recipients)',
        });
      }
    });
  });
  return out;
}

/**
 * Checks a bot file beyond its schema: identity, server, triggers against their options,
 * condition fields against the trigger's events, each action against what the event offers,
 * templates, cron expressions, durations. Tolerates values of the wrong type (the schema
 * reports those), so it can run on any parsed file. Paths are from the file's root.
 */
export function checkBot(spec: unknown, registry: Registry): CheckProblem[] {
  const out: CheckProblem[] = [];
  if (!isObj(spec)) return out;
  const hasAs = typeof spec.as === 'string';
  const hasKey = typeof spec.key === 'string';
  if (!hasAs && !hasKey)
    out.push({
      path: [],
      message: 'missing as: or key: (who the bot acts as)',
      hint: 'as: NAME (a user of the embedded server) or key: ${env:PINBOT_KEY_NAME} (an API key)',
    });
  if (hasAs && hasKey) out.push({ path: ['key'], onKey: true, message: 'give as: or key:, not both' });
  if (spec.create_user === true && !hasAs)
    out.push({
      path: ['create_user'],
      onKey: true,
      message: 'create_user needs as: NAME',
      hint: 'remove it, or give the user as: NAME',
    });
  const server = typeof spec.server === 'string' ? spec.server : 'embedded';
  if (server !== 'embedded') {
    try {
      new URL(server);
    } catch {
      out.push({
        path: ['server'],
        message: `"${server}" is not a URL`,
        hint: 'e.g. https://api.example.com, or embedded',
      });
    }
    if (hasAs)
      out.push({
        path: ['as'],
        onKey: true,
        message: 'as: works only with the embedded server',
        hint: 'use key: ${env:PINBOT_KEY_NAME} with a remote server',
      });
  }
  if (typeof spec.poll === 'string') {
    const ms = parseDuration(spec.poll);
    if (ms !== undefined && ms < 1000)
      out.push({
        path: ['poll'],
        message: `poll ${spec.poll} is too short`,
        hint: 'at least 1s (the server counts every request against your rate limit)',
      });
  }
  const rules = Array.isArray(spec.rules) ? spec.rules : [];
  const ids = new Map<string, number>();
  rules.forEach((rule, i) => {
    if (!isObj(rule)) return;
    const id = typeof rule.id === 'string' ? rule.id : `rule-${i + 1}`;
    if (ids.has(id))
      out.push({
        path: ['rules', i, 'id'],
        message: `rule id "${id}" is used twice (also by rules.${ids.get(id)!}.id)`,
        hint: 'give each rule its own id',
      });
    ids.set(id, i);
    out.push(...checkRule(rule, ['rules', i], registry));
  });
  out.push(...moneyWarnings(spec, rules));
  return out;
}
