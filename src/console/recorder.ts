import { stringify } from 'yaml';
import type { ActedRequest } from './act-as.js';
import { scenarioSchemaLine } from '../util/project-files.js';

/** What a recording holds: requests as users and clock moves, in order. */
export type RecordedStep =
  | { kind: 'request'; req: ActedRequest; balanceBefore?: number }
  | { kind: 'clock'; advanceMs?: number; setIso?: string };

/** An id of the API (`txn_…`, `msg_…`, `cnv_…`): turned into a capture when used later. Internal. */
const ID = /^[a-z]{3,5}_[0-9a-z]{8,}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;
/** Fields whose value changes from run to run (or with the clock): never expected. */
const VOLATILE = new Set([
  'id',
  'created_at',
  'updated_at',
  'timestamp',
  'pin_code',
  'sender_pin',
  'recipient_pin',
  'api_key',
  'next_before',
  'subscription_days',
  'next_shmita',
  'start_date',
  'end_date',
  'conversation_id',
  'last_message',
]);
const CAPTURE_PREFIX: Record<string, string> = {
  txn: 'tx',
  msg: 'message',
  cnv: 'conversation',
  int: 'introduction',
  creq: 'request',
  con: 'contact',
  usr: 'user',
};

/** The part of an answer a replay can expect: stable fields only, no ids, times or lists. Internal. */
function stableSubset(v: unknown, depth = 0): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (VOLATILE.has(k) || k.endsWith('_id')) continue;
    if (x === null || typeof x === 'number' || typeof x === 'boolean') out[k] = x;
    else if (typeof x === 'string') {
      if (!ID.test(x) && !ISO.test(x)) out[k] = x;
    } else if (!Array.isArray(x) && depth < 2 && !(x as Record<string, unknown>).pin_code) {
      const sub = stableSubset(x, depth + 1);
      if (sub && Object.keys(sub).length) out[k] = sub;
    }
  }
  return Object.keys(out).length ? out : undefined;
}

/** Every `id`-like string of an answer with its path (`transaction.id`), first seen first. Internal. */
function idsOf(v: unknown, path: string, out: Array<{ value: string; path: string }>): void {
  if (Array.isArray(v)) v.forEach((x, i) => idsOf(x, `${path}[${i}]`, out));
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      const p = path ? `${path}.${k}` : k;
      if (typeof x === 'string' && ID.test(x) && (k === 'id' || k.endsWith('_id'))) out.push({ value: x, path: p });
      else if (x && typeof x === 'object' && !(x as Record<string, unknown>).pin_code) idsOf(x, p, out);
    }
  }
}

/** A scenario user name from a display name: lower case, letters, digits and _. Internal. */
function userKey(name: string, taken: Set<string>): string {
  // the scenario's display name is the user's name: kept as it is when it can be a variable name
  if (/^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(name) && !taken.has(name)) {
    taken.add(name);
    return name;
  }
  const base =
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '') || 'user';
  let k = /^[a-z]/.test(base) ? base : `u_${base}`;
  for (let i = 2; taken.has(k); i++) k = `${base}_${i}`;
  taken.add(k);
  return k;
}

/**
 * Text recorded as it was typed or answered: a scenario renders every string as a template, so
 * `{{`/`{%` in a message or note (anyone's) is written as a literal (`{{ '{{' }}`), or its replay
 * would send something else — `{{ users.alice.api_key }}` her key — or not load. Internal.
 */
function literalText(s: string): string {
  return s.replace(/\{[{%]/g, (m) => `{{ '${m}' }}`);
}

/** literalText on every string of a value. Internal. */
function literal(v: unknown): unknown {
  if (typeof v === 'string') return literalText(v);
  if (Array.isArray(v)) return v.map(literal);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, literal(x)]));
  return v;
}

/** Replaces known values in text: ids by their capture, PINs by the user's pin_code. Internal. */
function substitute(v: unknown, table: Map<string, string>): unknown {
  if (typeof v === 'string') {
    const whole = table.get(v);
    if (whole) return `{{ ${whole} }}`;
    // ids and PINs hold no braces: what is typed is made literal first, then they are replaced
    let s = literalText(v);
    for (const [value, name] of table)
      if (value.length >= 6 && s.includes(value)) s = s.split(value).join(`{{ ${name} }}`);
    return s;
  }
  if (Array.isArray(v)) return v.map((x) => substitute(x, table));
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, substitute(x, table)]));
  return v;
}

/**
 * Writes a recording as a scenario (docs/scenarios.md): the users acted as or named (by PIN),
 * each with the balance it had when first seen, then one `request` step per request with
 * `expect: { status, body }` taken from the answer (stable fields only), ids from earlier answers
 * turned into `save:` captures and `{{ }}` references, PINs into `{{ users.NAME.pin_code }}`,
 * and the clock moves as `clock` steps.
 *
 * @example writeScenarioYaml({ name: 'tip', steps, pins: (pin) => store user by pin, startIso })
 */
export function writeScenarioYaml(o: {
  name: string;
  steps: readonly RecordedStep[];
  userByPin: (pin: string) => { display_name: string } | undefined;
  startIso?: string;
  /** The folder the scenario is saved in (its `$schema` line points from there; default `scenarios`). */
  dir?: string;
}): string {
  const taken = new Set<string>();
  const users = new Map<string, { key: string; balance?: number }>(); // by PIN
  const table = new Map<string, string>(); // value → template variable
  const userOf = (pin: string, name: string, balance?: number) => {
    let u = users.get(pin);
    if (!u) {
      users.set(pin, (u = { key: userKey(name, taken), balance }));
      table.set(pin, `users.${u.key}.pin_code`);
    }
    return u;
  };
  // users acted as, then the ones named by PIN in bodies
  for (const s of o.steps)
    if (s.kind === 'request') userOf(s.req.user.pin_code, s.req.user.display_name, s.balanceBefore);
  for (const s of o.steps) {
    if (s.kind !== 'request') continue;
    for (const value of Object.values((s.req.body ?? {}) as Record<string, unknown>).flat()) {
      if (typeof value === 'string' && /^[A-Z0-9]{6}$/.test(value) && !users.has(value)) {
        const found = o.userByPin(value);
        if (found) userOf(value, found.display_name);
      }
    }
  }
  // ids: which answer each comes from, and whether a later request uses it
  const texts = o.steps.map((s) => (s.kind === 'request' ? `${s.req.path} ${JSON.stringify(s.req.body ?? null)}` : ''));
  const saves = new Map<number, Record<string, string>>();
  const counts = new Map<string, number>();
  o.steps.forEach((s, i) => {
    if (s.kind !== 'request' || s.req.status >= 400) return;
    const found: Array<{ value: string; path: string }> = [];
    idsOf(s.req.answer, '', found);
    for (const { value, path } of found) {
      if (table.has(value) || !texts.slice(i + 1).some((t) => t.includes(value))) continue;
      const prefix = CAPTURE_PREFIX[value.split('_')[0]!] ?? 'id';
      const n = (counts.get(prefix) ?? 0) + 1;
      counts.set(prefix, n);
      const name = `${prefix}${n}`;
      table.set(value, name);
      saves.set(i, { ...(saves.get(i) ?? {}), [name]: path });
    }
  });
  const steps = o.steps.map((s, i) => {
    if (s.kind === 'clock')
      return s.advanceMs !== undefined ? { clock: { advance: humanMs(s.advanceMs) } } : { clock: { set: s.setIso } };
    const r = s.req;
    const step: Record<string, unknown> = {
      as: users.get(r.user.pin_code)!.key,
      request: `${r.method} ${substitute(r.path, table) as string}`,
    };
    if (r.body !== undefined) step.body = substitute(r.body, table);
    const body = literal(
      r.status < 400
        ? stableSubset(r.answer)
        : stableSubset(
            (r.answer as { error?: unknown })?.error !== undefined
              ? { error: { code: (r.answer as { error: { code: unknown } }).error.code } }
              : undefined,
          ),
    );
    step.expect = body ? { status: r.status, body } : { status: r.status };
    const save = saves.get(i);
    if (save) step.save = save;
    return step;
  });
  const doc: Record<string, unknown> = { name: o.name, description: 'Recorded in the pinbot console.' };
  if (o.startIso) doc.clock = { start: o.startIso };
  doc.users = Object.fromEntries([...users.values()].map((u) => [u.key, u.balance ? { balance: u.balance } : {}]));
  doc.steps = steps;
  return `${scenarioSchemaLine(o.dir ?? 'scenarios')}${stringify(doc, { lineWidth: 0 })}`;
}

/** A duration in the scenario's words (1d, 2h, 90s). Internal. */
function humanMs(ms: number): string {
  for (const [unit, n] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const)
    if (ms % n === 0) return `${ms / n}${unit}`;
  return `${ms}ms`;
}
