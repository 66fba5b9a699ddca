import type { Client } from '../../client/client.js';
import type { Clock } from '../../clock/clock.js';
import type { ConditionResult, RunScope } from '../contract/types.js';
import type { CompiledBot, CompiledRule } from '../define/bot.js';
import { loadBotFile, type BotLoadOptions } from '../define/loader.js';
import { renderDeep } from '../liquid/templates.js';
import type { Trace } from '../state/traces.js';
import type { FileProblem } from '../../util/yaml-errors.js';

/** What one rule did for an event, recorded or replayed. */
export interface ReplayedRule {
  rule: string;
  /** `runs`, or why not (`condition_false`, `disabled`, `not_triggered`, a recorded reason). */
  decision: string;
  /** The condition's result when the rule's conditions were looked at. */
  condition?: string;
  /** The steps it takes: `reply "Thank you…"`, `accept`, `choose → else`. */
  steps: string[];
}

/** One event of the history: the same decision with the edited bot, or what changed. */
export interface ReplayedEvent {
  event: string;
  summary: string;
  at: string;
  status: 'same' | 'changed' | 'not_replayable';
  /** One line per difference (a rule that now runs or no longer does, a step that differs). */
  changes: string[];
  before: ReplayedRule[];
  after: ReplayedRule[];
}

export interface WhatIfReport {
  bot: string;
  traces: number;
  events: ReplayedEvent[];
  changed: number;
  /** `this edit changes 3 of the last 100 decisions`. */
  summary: string;
}

/** A read the replay does not have (it reads only what the trace recorded). */
class NotRecorded extends Error {}

/** An API client that refuses everything: a replay acts on nothing and reads nothing live. Internal. */
function noApi(): Client {
  const refuse = (path: string): unknown =>
    new Proxy(() => undefined, {
      get: (_t, k) => (k === 'then' ? undefined : refuse(`${path}.${String(k)}`)),
      apply: () => {
        throw new NotRecorded(`reads ${path}(), which the trace did not record`);
      },
    });
  return refuse('api') as Client;
}

/** A clock stopped at the event's time. Internal. */
function stoppedClock(at: number): Clock {
  const no = () => {
    throw new NotRecorded('waits, which a replay does not');
  };
  return {
    now: () => at,
    virtual: true,
    setTimer: no,
    sleepUntil: no,
    sleep: no,
    hold: () => () => undefined,
  } as unknown as Clock;
}

const HELD_BACK = new Set(['cooldown', 'throttled', 'loop_suspected', 'from_bot', 'single_running', 'sender_backlog']);
/** A step's arguments in full (compared as text: traces keep them up to 1,000 characters). Internal. */
const shown = (v: unknown) => JSON.stringify(v ?? null);
/**
 * A condition's result as text; one with no value of its own says what its parts found (`not
 * (from contacts ✓)`). Internal. */
const conditionText = (c?: ConditionResult): string | undefined => {
  if (!c) return undefined;
  if (c.detail) return `${c.label} (${c.detail})`;
  return c.children?.length
    ? `${c.label} (${c.children.map((k) => `${conditionText(k)} ${k.ok ? '✓' : '✗'}`).join(', ')})`
    : c.label;
};
/** The deepest failing condition: what a person needs to see. Internal. */
const failing = (c: ConditionResult): ConditionResult =>
  c.children?.find((k) => !k.ok) ? failing(c.children.find((k) => !k.ok)!) : c;

/** A recorded step as a line. Internal. */
function stepLine(action: string, args: unknown, result?: unknown): string {
  if (action === 'choose')
    return `choose → ${
      (result as { label?: string } | undefined)?.label ?? /"label":"([^"]+)"/.exec(String(result))?.[1] ?? '?'
    }`;
  return args === null || args === undefined ? action : `${action} ${shown(args)}`;
}

/** The recorded decision of a rule. Internal. */
function recorded(t: Trace): ReplayedRule {
  const runs = t.outcome !== 'not_run';
  return {
    rule: t.rule,
    decision: runs ? 'runs' : (t.reason ?? 'not_run'),
    condition: t.conditions ? conditionText(t.conditions.ok ? t.conditions : failing(t.conditions)) : undefined,
    steps: t.steps.filter((s) => s.status !== 'skipped').map((s) => stepLine(s.action, s.args, s.result)),
  };
}

/** Evaluates one edited rule for a recorded event, reading only what the trace recorded. Internal. */
async function replayRule(
  rule: CompiledRule,
  bot: CompiledBot,
  t: Trace,
  before: Trace | undefined,
): Promise<ReplayedRule> {
  const at = Date.parse(t.at);
  const contacts = t.seen?.contacts ?? {};
  const scope: RunScope = {
    event: { ...t.event.payload, type: t.event.type, event_id: t.event.key },
    bot: { name: bot.name },
    me: t.seen!.me!,
    vars: structuredClone(t.seen?.vars ?? {}),
    steps: [],
    now: t.at,
    get wallet(): Promise<unknown> {
      throw new NotRecorded('reads wallet, which the trace did not record');
    },
  };
  const trigger = rule.triggers.find((x) => x.def.name === t.event.type)!.def;
  const ctx = {
    scope,
    api: noApi(),
    trigger,
    clock: stoppedClock(at),
    isContact: async (pin: string) => {
      if (!(pin in contacts)) throw new NotRecorded(`asks whether ${pin} is a contact, which the trace did not record`);
      return contacts[pin]!;
    },
  };
  if (!rule.enabled) return { rule: rule.id, decision: 'disabled', steps: [] };
  let cond: ConditionResult | undefined;
  if (rule.condition) {
    try {
      cond = await rule.condition(ctx);
    } catch (err) {
      // what cannot be evaluated fails closed, and says why
      cond = { ok: false, label: 'could not replay', detail: (err as Error).message };
    }
    if (!cond.ok)
      return { rule: rule.id, decision: 'condition_false', condition: conditionText(failing(cond)), steps: [] };
  }
  // held back by what the replay cannot know (cooldown, throttle, loop guard…): as recorded
  if (before && before.outcome === 'not_run' && before.reason && HELD_BACK.has(before.reason))
    return { rule: rule.id, decision: before.reason, condition: conditionText(cond), steps: [] };
  return {
    rule: rule.id,
    decision: 'runs',
    condition: conditionText(cond),
    steps: await plannedSteps(rule, bot, scope, ctx, before),
  };
}

/** The steps an edited rule would take, rendered, without taking them. Internal. */
async function plannedSteps(
  rule: CompiledRule,
  bot: CompiledBot,
  scope: RunScope,
  ctx: Parameters<NonNullable<CompiledRule['condition']>>[0],
  before: Trace | undefined,
): Promise<string[]> {
  const out: string[] = [];
  const arms = new Map<number, number | null>();
  for (const step of rule.steps) {
    if (step.onError) continue;
    if (step.guard && !step.guard.every((g) => arms.get(g.step) === g.arm)) continue;
    // a later template may read an earlier step's result: the recorded one, when it is the same step
    const rec = before?.steps.find((s) => s.index === step.index && s.action === step.action.name);
    if (rec && rec.result !== undefined) scope.steps[step.index] = rec.result;
    if (step.branches) {
      let arm: number | null = null;
      for (let k = 0; k < step.branches.length && arm === null; k++) {
        const b = step.branches[k]!;
        if (!b.condition) arm = k;
        else if ((await b.condition(ctx).catch(() => ({ ok: false }) as ConditionResult)).ok) arm = k;
      }
      arms.set(step.index, arm);
      out.push(`choose → ${arm === null ? 'no branch' : step.branches[arm]!.label}`);
      continue;
    }
    let args: unknown = step.args;
    try {
      if (step.action.templated !== false) args = await renderDeep(step.args, scope);
      // as a run prepares them (`set` types its values, money steps check the limits): nothing is sent
      if (step.action.prepare)
        args = step.action.prepare(args, {
          ...ctx,
          bot: bot.name,
          rule: rule.id,
          effects: {},
          signal: AbortSignal.abort(),
        } as never);
    } catch (err) {
      args = `(would fail: ${(err as Error).message})`;
    }
    out.push(stepLine(step.action.name, args));
  }
  return out;
}

/**
 * Replays a bot's recorded decisions against an edited version of it, acting on nothing: for
 * each recorded event (its payload, and what its conditions read, as the trace kept them) each
 * rule of the edited bot is decided again and its steps rendered — no request is made (the API
 * client refuses every call; a condition that would read something live fails closed and says
 * so). Cooldowns, throttles and the loop guard are taken as recorded.
 *
 * @example const r = await whatIf(editedBot, traces); console.log(r.summary);
 */
export async function whatIf(bot: CompiledBot, traces: Trace[]): Promise<WhatIfReport> {
  const events = new Map<string, Trace[]>();
  for (const t of [...traces].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))) {
    const list = events.get(t.event.key) ?? [];
    list.push(t);
    events.set(t.event.key, list);
  }
  const out: ReplayedEvent[] = [];
  for (const [key, list] of events) {
    const t = list[0]!;
    const base = { event: key, summary: t.event.summary, at: t.at, before: list.map(recorded) };
    const me = list.find((x) => x.seen?.me)?.seen;
    if (!t.event.payload || !me) {
      out.push({
        ...base,
        status: 'not_replayable',
        changes: [
          t.event.payload
            ? 'the trace does not say what the decision read (recorded by an older pinbot)'
            : 'the event was too large to keep in the trace',
        ],
        after: [],
      });
      continue;
    }
    const withSeen = {
      ...t,
      seen: {
        ...me,
        ...list.find((x) => x.seen?.vars)?.seen,
        contacts: Object.assign({}, ...list.map((x) => x.seen?.contacts ?? {})),
      },
    };
    const after: ReplayedRule[] = [];
    for (const rule of bot.rules.filter((r) => r.triggers.some((x) => x.def.name === t.event.type))) {
      after.push(
        await replayRule(
          rule,
          bot,
          withSeen,
          list.find((x) => x.rule === rule.id),
        ),
      );
    }
    const changes = compare(base.before, after);
    out.push({ ...base, status: changes.length ? 'changed' : 'same', changes, after });
  }
  const changed = out.filter((e) => e.status === 'changed').length;
  return {
    bot: bot.name,
    traces: traces.length,
    events: out,
    changed,
    summary:
      `this edit changes ${changed} of the last ${out.length} ` +
      `decision${out.length === 1 ? '' : 's'} of ${bot.name}`,
  };
}

/** The differences between the recorded rules and the replayed ones. Internal. */
function compare(before: ReplayedRule[], after: ReplayedRule[]): string[] {
  const out: string[] = [];
  // in the edited bot's order, then rules it no longer has
  const ids = [...new Set([...after.map((r) => r.rule), ...before.map((r) => r.rule)])];
  for (const id of ids) {
    const b = before.find((r) => r.rule === id);
    const a = after.find((r) => r.rule === id);
    const ranBefore = b?.decision === 'runs';
    const runsNow = a?.decision === 'runs';
    if (ranBefore && !runsNow)
      out.push(
        `rule ${id} no longer runs: ` +
          `${
            a
              ? `${a.decision}${a.condition ? ` — ${a.condition}` : ''}`
              : 'the edited bot has no such rule for this event'
          }`,
      );
    else if (!ranBefore && runsNow)
      out.push(
        `rule ${id} now runs${a.condition ? ` (${a.condition})` : ''}; before: ` +
          `${
            b ? `${b.decision}${b.condition ? ` — ${b.condition}` : ''}` : 'not triggered'
          } → steps: ${a.steps.join(', ') || 'none'}`,
      );
    else if (ranBefore && runsNow) {
      const n = Math.max(b!.steps.length, a!.steps.length);
      for (let i = 0; i < n; i++) {
        if (b!.steps[i] !== a!.steps[i])
          out.push(`rule ${id} step ${i}: ${b!.steps[i] ?? '(none)'} → ${a!.steps[i] ?? '(none)'}`);
      }
    }
  }
  return out;
}

/** The edited file could not be loaded: its problems (`file:line:col`), nothing replayed. */
export interface WhatIfInvalid {
  problems: FileProblem[];
}

/**
 * The what-if of a bot file as it is on disk: the file loaded as the server would load it,
 * then its bot's recorded decisions (`traces(name)`: the running bot's, newest last) replayed
 * against it, acting on nothing. `pinbot bots what-if` and the console's What-if both call this.
 *
 * @example const r = await whatIfFile('bots/tip-jar.yaml', (n) => host.traces(n, 100), { registry });
 */
export async function whatIfFile(
  file: string,
  traces: (bot: string) => Promise<Trace[]>,
  o: BotLoadOptions & { bot?: string },
): Promise<WhatIfReport | WhatIfInvalid> {
  const { bot, problems } = loadBotFile(file, o);
  if (!bot) return { problems };
  return whatIf(bot, await traces(o.bot ?? bot.name));
}
