import { knownFields } from '../contract/event-fields.js';
import { hintFor } from '../../util/suggest.js';
import { isTemplate, liquid } from './templates.js';
import type { CheckProblem, TriggerDef } from '../contract/types.js';
import { hasConversation, hasPerson } from '../contract/memory-subjects.js';

/** A variable path a template reads: `event.sender.pin_code` is `['event', 'sender', 'pin_code']`. */
export type VarPath = Array<string | number>;

/** What templates and conditions may read, besides the event's fields (docs/bots.md "Templates"). */
const ROOTS: Record<string, string[] | undefined> = {
  event: undefined, // checked against the triggers' fields
  vars: undefined, // anything (unset variables are empty)
  memory: undefined, // the event's person: any key (unset keys are empty)
  conversation_memory: undefined, // the event's conversation: any key
  steps: undefined, // results of earlier steps: any shape
  match: undefined, // named groups of a `matches:` condition
  answers: undefined, // what the run's `ask` steps saved (checked against the asks, define/bot-checks.ts)
  error: ['step', 'action', 'message', 'code'],
  bot: ['name'],
  me: ['id', 'display_name', 'pin_code'],
  wallet: ['balance', 'subscription_days', 'is_subscribed', 'next_shmita'],
  now: [],
};

/** Properties Liquid gives any list or text. */
const LIQUID_PROPS = new Set(['size', 'first', 'last']);

const paths = new Map<string, VarPath[]>();

/**
 * The global variable paths `text` reads (loop and `assign` variables left out), once per text.
 * Throws on a template that does not parse.
 */
export function templatePaths(text: string): VarPath[] {
  let p = paths.get(text);
  if (!p) {
    p = liquid
      .globalVariableSegmentsSync(liquid.parse(text))
      .map((segs) => segs.map((s) => (typeof s === 'number' ? s : String(s))));
    if (paths.size > 10_000) paths.clear();
    paths.set(text, p);
  }
  return p;
}

/** The paths a Liquid expression (a `liquid:` condition) reads. */
export function expressionPaths(expr: string): VarPath[] {
  return templatePaths(`{{ ${expr} }}`);
}

/** `event.sender.pin_code` as written in a template. Internal. */
const show = (p: VarPath) => p.map((s, i) => (typeof s === 'number' ? `[${s}]` : i ? `.${s}` : s)).join('');

/**
 * Checks the variables a template or expression reads: the root must be one templates have
 * (`event`, `vars`, `me`…), and an `event` path must be a field of one of the rule's triggers.
 * Problems say "did you mean". Paths are relative to the checked value.
 */
export function checkPaths(
  found: VarPath[],
  triggers: TriggerDef[],
  extraRoots: string[] = [],
  text?: string,
): CheckProblem[] {
  const out: CheckProblem[] = [];
  const fields = new Set(triggers.flatMap((t) => knownFields(t.example)));
  for (const p of found) {
    const root = String(p[0]);
    if (!(root in ROOTS) && !extraRoots.includes(root)) {
      out.push({
        path: [],
        message: `unknown variable "${root}" in ${show(p)}`,
        hint: hintFor(root, [...Object.keys(ROOTS), ...extraRoots], 'variables'),
      });
      continue;
    }
    out.push(...memoryProblems(root, show(p), triggers));
    const known = ROOTS[root];
    if (known && p.length > 1 && typeof p[1] === 'string' && !known.includes(p[1]) && !LIQUID_PROPS.has(p[1])) {
      out.push({
        path: [],
        message: `${show(p)}: ${root} has no field "${p[1]}"`,
        hint: known.length ? hintFor(p[1], known, `fields of ${root}`) : undefined,
      });
    }
    // a plugin's trigger (`plugin.name`) documents its fields by an example that need not list them all
    if (root !== 'event' || p.length < 2 || triggers.length === 0 || triggers.some((t) => !t.completeExample)) continue;
    const rest = p.slice(1);
    const at = rest.map(String).join('.');
    if (eventPathKnown(rest, fields)) {
      const partly = onlySomeHave(p, triggers, text);
      if (partly) out.push(partly);
      continue;
    }
    const names = triggers.map((t) => t.name).join(', ');
    out.push({
      path: [],
      message: `${show(p)}: ${names} events have no field "${at}"`,
      hint: hintFor(at, [...fields], 'fields'),
    });
  }
  return out;
}

/** `memory.KEY` on events about no person, `conversation_memory.KEY` on events in no conversation. Internal. */
function memoryProblems(root: string, shown: string, triggers: TriggerDef[]): CheckProblem[] {
  if (root !== 'memory' && root !== 'conversation_memory') return [];
  const lacking = triggers.filter((t) => (root === 'memory' ? !hasPerson(t) : !hasConversation(t)));
  if (!lacking.length) return [];
  const names = lacking.map((t) => t.name).join(', ');
  return root === 'memory'
    ? [
        {
          path: [],
          message: `${shown}: ${names} events are about no person, so there is no memory to read`,
          hint:
            'memory is per person: read it in rules on message.received, transfer.*, ' +
            'introduction.*, contact_request.received or contact.added; keep what ' +
            'belongs to the bot in vars',
        },
      ]
    : [
        {
          path: [],
          message: `${shown}: ${names} events are in no conversation, so there is no conversation memory to read`,
          hint: 'read conversation_memory in rules on message.received (or introduction.completed)',
        },
      ];
}

/**
 * A warning for an `event` field that only some of the rule's triggers have (`event.content` on
 * `[message.received, contact_request.received]`): a run for the others fails, since templates
 * are strict. `| default: …` after it says it may be missing. Internal.
 */
function onlySomeHave(p: VarPath, triggers: TriggerDef[], text: string | undefined): CheckProblem | undefined {
  if (triggers.length < 2) return undefined;
  if (text !== undefined && new RegExp(`${escapeRe(show(p))}\\s*\\|\\s*default\\b`).test(text)) return undefined;
  const rest = p.slice(1);
  const lacking = triggers.filter((t) => !eventPathKnown(rest, new Set(knownFields(t.example))));
  if (!lacking.length) return undefined;
  const having = triggers.filter((t) => !lacking.includes(t)).map((t) => t.name);
  const names = lacking.map((t) => t.name).join(', ');
  return {
    path: [],
    warning: true,
    message:
      `${show(p)}: ${names} events have no field "${rest.map(String).join('.')}" (only ` +
      `${having.join(', ')} ${having.length > 1 ? 'have' : 'has'} it): a run for ` +
      `${lacking.length > 1 ? 'them' : 'one'} fails`,
    hint: `write {{ ${show(p)} | default: "" }} if it may be missing, or give ${names} a rule of its own`,
  };
}

/** Whether `rest` (the path after `event`) names a field: a known one, under a list, or a Liquid property. Internal. */
function eventPathKnown(rest: VarPath, fields: Set<string>): boolean {
  for (let n = rest.length; n >= 1; n--) {
    const head = rest.slice(0, n).map(String).join('.');
    if (!fields.has(head)) continue;
    if (n === rest.length) return true;
    const next = rest[n]!;
    // under a list (participants[0].pin_code) the shape is not known; size/first/last are Liquid's
    return typeof next === 'number' || LIQUID_PROPS.has(String(next));
  }
  return false;
}

/** Every template string inside a step's arguments, with its path. Internal. */
export function templatesIn(
  value: unknown,
  path: Array<string | number> = [],
): Array<{ text: string; path: Array<string | number> }> {
  if (typeof value === 'string') return isTemplate(value) ? [{ text: value, path }] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => templatesIn(v, [...path, i]));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => templatesIn(v, [...path, k]));
  return [];
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The value at a variable path of a scope (for traces). Internal. */
export function valueAt(scope: object, p: VarPath): unknown {
  let cur: unknown = scope;
  for (const seg of p) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur =
      Array.isArray(cur) && typeof seg === 'number'
        ? cur[seg < 0 ? cur.length + seg : seg]
        : Object.prototype.hasOwnProperty.call(cur, seg)
          ? (cur as Record<string, unknown>)[seg as string]
          : undefined;
  }
  return cur;
}

/** `event.amount` as written. */
export { show as pathText };

/** Thrown at run time when a template reads a variable that is not there (strict variables). */
export class MissingVariableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MissingVariableError';
  }
}

/** The strict paths of each list of paths templatePaths gave (they are kept per text). Internal. */
const strict = new WeakMap<VarPath[], VarPath[]>();

/**
 * The paths of `found` that must be there: those under `event`, `me`, `bot` or `error`, unless
 * the text gives them a default (`{{ event.note | default: "none" }}` says the field may be
 * missing). Worked out once per list of paths. Internal.
 */
function strictPaths(text: string, found: VarPath[]): VarPath[] {
  let out = strict.get(found);
  if (out) return out;
  out = found.filter((p) => {
    const root = String(p[0]);
    if (root !== 'event' && root !== 'me' && root !== 'bot' && root !== 'error') return false;
    return !new RegExp(`${escapeRe(show(p))}\\s*\\|\\s*default\\b`).test(text);
  });
  // `found` comes from templatePaths (one list per text): the same list is the same text
  strict.set(found, out);
  return out;
}

/**
 * Strict variables at run time: throws MissingVariableError when a template (or expression)
 * reads an `event`, `me`, `bot` or `error` field that this event does not have. `vars`,
 * `steps`, `match` and `wallet` may be unset (they render empty).
 *
 * @example assertVariables(['Hi {{ event.sender.dispaly_name }}'], scope, 'message.received')
 */
export function assertVariables(text: string, found: VarPath[], scope: object, eventType: string): void {
  for (const p of strictPaths(text, found)) {
    const root = String(p[0]);
    let cur: unknown = scope;
    for (let i = 0; i < p.length; i++) {
      const seg = p[i]!;
      if (cur === null || cur === undefined) break; // null is a value: its fields render empty
      if (typeof cur !== 'object') break;
      if (Array.isArray(cur) && typeof seg === 'number') {
        cur = cur[seg < 0 ? cur.length + seg : seg];
        continue;
      }
      if (LIQUID_PROPS.has(String(seg)) && (Array.isArray(cur) || i === p.length - 1)) break;
      if (!Object.prototype.hasOwnProperty.call(cur, seg)) {
        const where = root === 'event' ? `${eventType} events` : root;
        throw new MissingVariableError(
          `${show(p)} is not set: ${where} have no "${p
            .slice(1, i + 1)
            .map(String)
            .join('.')}" (templates are strict: check the spelling, or use | default: …)`,
        );
      }
      cur = (cur as Record<string, unknown>)[seg as string];
    }
  }
}
