import { stringify } from 'yaml';
import type { Trace } from '../runtime/index.js';
import { USER_NAME_PATTERN } from './schema.js';
import { scenarioSchemaLine } from '../util/project-files.js';

/** What the scenario is made from: a bot's traces, which run, and where its file is from the scenario. */
export interface FromTraceInput {
  /** The bot's traces (any order); the run's traces are those of one event. */
  traces: Trace[];
  /** The run: its event's key (`transfer.received:txn_…`), the event id alone (`txn_…`), or `last`. */
  run: string;
  /** The bot file, as the scenario names it (relative to the scenario file). */
  botFile: string;
  /** The folder the scenario is written to (its `$schema` line points from there; default `scenarios`). */
  dir?: string;
}

/** A run that cannot be turned into a scenario, with what to do. */
export class FromTraceError extends Error {}

const WITHIN = '1m';

/**
 * A scenario user name from a display name: the display name itself when it is a valid user name
 * (scenario users are created with their name as display name, and replies quote it — `{{
 * me.display_name }}` too), else a slug. Internal.
 */
function userName(display: string, taken: Set<string>): string {
  if (new RegExp(USER_NAME_PATTERN).test(display) && !taken.has(display)) {
    taken.add(display);
    return display;
  }
  let base =
    display
      .toLowerCase()
      .replace(/[^a-z0-9_.-]+/g, '_')
      .replace(/^[^a-z]+/, '')
      .slice(0, 40) || 'user';
  if (!new RegExp(USER_NAME_PATTERN).test(base)) base = 'user';
  let name = base;
  for (let i = 2; taken.has(name); i++) name = `${base}${i}`;
  taken.add(name);
  return name;
}

/** The traces of the run asked for: every rule's trace of one event. Internal. */
function runTraces(traces: Trace[], run: string): Trace[] {
  const byStart = [...traces].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const key =
    run === 'last'
      ? byStart.at(-1)?.event.key
      : byStart.find((t) => t.event.key === run || t.event.key.endsWith(`:${run}`))?.event.key;
  if (!key) {
    const recent = [...new Map(byStart.map((t) => [t.event.key, t])).values()]
      .slice(-5)
      .map((t) => `  ${t.event.key}  ${t.at}  ${t.event.summary}`);
    throw new FromTraceError(
      `no run of this bot for ${JSON.stringify(run)} in its recorded traces; ` +
        `${
          recent.length
            ? `the latest are:\n${recent.join('\n')}\ngive an event id (e.g. ${recent
                .at(-1)!
                .trim()
                .split(/\s/)[0]!
                .split(':')
                .pop()}) or last`
            : 'it has none yet'
        }`,
    );
  }
  return byStart.filter((t) => t.event.key === key);
}

/** A recorded user: what an event says of a person. Internal. */
interface RecordedUser {
  display_name?: string;
  pin_code?: string;
}

/** The scenario's users made from the recorded ones, by PIN. Internal. */
class Cast {
  readonly users: Record<string, Record<string, unknown>> = {};
  private readonly taken = new Set<string>();
  private readonly byPin = new Map<string, string>();

  /** The scenario name of a recorded user. */
  name(u: RecordedUser): string {
    const known = u.pin_code ? this.byPin.get(u.pin_code) : undefined;
    if (known) return known;
    const n = userName(u.display_name ?? 'user', this.taken);
    if (u.pin_code) this.byPin.set(u.pin_code, n);
    this.users[n] = {};
    return n;
  }

  /** A user's PIN as a template (scenario PINs are made fresh): `users['Tip Jar']` for a name with a space. */
  pin(u: RecordedUser): string {
    const n = this.name(u);
    return /^[A-Za-z_][A-Za-z0-9_]*$/.test(n) ? `{{ users.${n}.pin_code }}` : `{{ users['${n}'].pin_code }}`;
  }
}

/** A recreated run: who caused it, where replies go, the steps that cause it. Internal. */
interface Recreated {
  /** Who caused the event (replies go to them). */
  actor: string;
  /** Where the bot's replies go, when not to the actor. */
  replyTo?: string;
  /** The other participants of an introduction (they answer after the bot). */
  others?: string[];
  steps: Array<Record<string, unknown>>;
}

type Recreate = (e: Record<string, unknown>, cast: Cast, bot: RecordedUser) => Recreated;

const user = (v: unknown): RecordedUser => (v && typeof v === 'object' ? (v as RecordedUser) : {});
const others = (e: Record<string, unknown>, bot: RecordedUser): RecordedUser[] =>
  ((e.participants as RecordedUser[] | undefined) ?? []).filter((p) => p.pin_code !== bot.pin_code);
const ok = (status: number | number[]) => ({ status });

/** `from` pays `to` the amount and note of the event (granted the amount). Internal. */
function payment(e: Record<string, unknown>, cast: Cast, from: RecordedUser, to: RecordedUser) {
  const payer = cast.name(from);
  cast.users[payer]!.balance = Number(e.amount);
  return {
    as: payer,
    request: 'POST /wallet/send',
    body: {
      recipient_pin: cast.pin(to),
      amount: e.amount,
      ...(typeof e.note === 'string' && e.note ? { note: e.note } : {}),
    },
    expect: ok(201),
  };
}

/** The bot's transfer, answered by its recipient (`transfer.accepted`/`.declined`). Internal. */
const sentAnswered =
  (answer: 'accept' | 'decline'): Recreate =>
  (e, cast, bot) => {
    const to = cast.name(user(e.recipient));
    return {
      actor: to,
      steps: [
        {
          name: 'the bot sends the transfer',
          ...payment(e, cast, bot, user(e.recipient)),
          save: { tx: 'transaction.id' },
        },
        { name: `${to} answers it`, as: to, request: `POST /wallet/transactions/{{ tx }}/${answer}`, expect: ok(200) },
      ],
    };
  };

/** How each event a scenario can cause is recreated. Internal. */
const RECREATE: Record<string, Recreate> = {
  'transfer.received': (e, cast, bot) => {
    const from = cast.name(user(e.sender));
    return {
      actor: from,
      steps: [{ name: `${from} sends the transfer the bot received`, ...payment(e, cast, user(e.sender), bot) }],
    };
  },
  'message.received': (e, cast, bot) => {
    const from = cast.name(user(e.sender));
    const body = { recipient_pin: cast.pin(bot), content: e.content };
    const step = { as: from, request: 'POST /messages/send', body, expect: ok(201) };
    return { actor: from, steps: [{ name: `${from} sends the message the bot received`, ...step }] };
  },
  'transfer.accepted': sentAnswered('accept'),
  'transfer.declined': sentAnswered('decline'),
  'contact_request.received': (e, cast, bot) => {
    const from = cast.name(user(e.requester));
    const body = { pin_code: cast.pin(bot) };
    const step = { as: from, request: 'POST /contacts/request', body, expect: ok(201) };
    return { actor: from, steps: [{ name: `${from} asks the bot to be a contact`, ...step }] };
  },
  'contact.added': (e, cast, bot) => {
    // the bot asks, the other asks back: mutual intent is acceptance (nothing for the bot to answer)
    const other = cast.name(user(e.contact));
    const me = cast.name(bot);
    return {
      actor: other,
      steps: [
        {
          name: 'the bot asks to be a contact',
          as: me,
          request: 'POST /contacts/request',
          body: { pin_code: cast.pin(user(e.contact)) },
          expect: ok(201),
        },
        {
          name: `${other} asks back: they are contacts`,
          as: other,
          request: 'POST /contacts/request',
          body: { pin_code: cast.pin(bot) },
          expect: { status: 201, body: { status: 'accepted' } },
        },
      ],
    };
  },
  'introduction.received': (e, cast, bot) => {
    const by = cast.name(user(e.introducer));
    const step = { name: `${by} introduces the bot`, ...introduce(e, cast, by), save: { intro: 'id' } };
    return { actor: by, others: others(e, bot).map((p) => cast.name(p)), steps: [step] };
  },
  'introduction.completed': introductionCompleted,
};

/** The introduction of the event, made again by `by`. Internal. */
function introduce(e: Record<string, unknown>, cast: Cast, by: string) {
  const pins = ((e.participants as RecordedUser[] | undefined) ?? []).map((p) => cast.pin(p));
  return {
    as: by,
    request: 'POST /introductions',
    body: { participant_pins: pins, ...(typeof e.message === 'string' && e.message ? { message: e.message } : {}) },
    expect: ok(201),
  };
}

/** An introduction the bot made or is in, accepted by everyone. Internal. */
function introductionCompleted(e: Record<string, unknown>, cast: Cast, bot: RecordedUser): Recreated {
  const introducer = user(e.introducer);
  const byBot = introducer.pin_code === bot.pin_code;
  const by = cast.name(introducer);
  const rest = others(e, bot).map((p) => cast.name(p));
  const steps: Array<Record<string, unknown>> = [
    { name: `${by} makes the introduction`, ...introduce(e, cast, by), save: { intro: 'id' } },
  ];
  // the bot may accept by a rule of its own (then its accept is 409): either way it is in
  if (!byBot)
    steps.push({
      name: 'the bot accepts',
      as: cast.name(bot),
      request: 'POST /introductions/{{ intro }}/accept',
      expect: ok([200, 409]),
    });
  for (const p of rest)
    steps.push({ name: `${p} accepts`, as: p, request: 'POST /introductions/{{ intro }}/accept', expect: ok(200) });
  steps.push({ expect_event: { introduction: { by, status: 'accepted' }, within: WITHIN } });
  return { actor: by, replyTo: byBot ? undefined : rest[0], steps };
}

/** The events a run can be recreated from, in the order the docs list them. */
export const SCENARIO_EVENTS: readonly string[] = Object.keys(RECREATE);

/**
 * A scenario that recreates one run of a bot — the users (who caused the event, with the balance
 * it needs, the bot's user, the others it names, their contact if the conditions saw one), the
 * bot file with the variables it had, the requests that cause the event — and expects what the
 * bot did (each reply, accept and decline), so a real incident becomes a regression test in one
 * command. Events a scenario cannot cause (a schedule, a balance change) are refused, naming those
 * it can.
 *
 * @example process.stdout.write(scenarioFromTrace({ traces, run: 'last', botFile: '../bots/tip-jar.yaml' }));
 */
export function scenarioFromTrace(o: FromTraceInput): string {
  const run = runTraces(o.traces, o.run);
  const first = run[0]!;
  const e = first.event;
  if (!e.payload)
    throw new FromTraceError(
      `the run of ${e.key} has no recorded event ` +
        `(${
          e.payload_omitted ? 'it was too large to keep' : 'it was traced by an older pinbot'
        }): write this scenario by hand`,
    );
  const recreate = RECREATE[e.type];
  if (!recreate)
    throw new FromTraceError(
      `a ${e.type} event cannot be recreated by a scenario (a scenario can cause ` +
        `${SCENARIO_EVENTS.join(', ')}): write its steps by hand — see ` +
        `docs/scenarios.md`,
    );
  const me = run.find((t) => t.seen?.me)?.seen?.me;
  if (!me)
    throw new FromTraceError(
      `the run of ${e.key} does not say who caused it or who the bot is: only runs ` +
        `recorded by this pinbot can be turned into scenarios`,
    );
  const cast = new Cast();
  const made = recreate(e.payload, cast, me);
  const bot = cast.name(me);
  const actorPin = pinOf(e.payload, e.type);
  if (actorPin && run.some((t) => t.seen?.contacts?.[actorPin] === true)) cast.users[made.actor]!.contacts = [bot];
  const notes: string[] = [];
  const steps = [...made.steps, ...expected(run, { ...made, bot, type: e.type }, notes)];
  const vars = run.find((t) => t.seen?.vars)?.seen?.vars;
  const doc = {
    name: `${first.bot}: ${e.summary.replace(/\s+from .*$/, '')} from ${made.actor} (run of ${first.at})`,
    description: [
      `Made by pinbot bots trace ${first.bot} --scenario ${e.key.split(':').pop()} ` +
        `from the run at ${first.at}: ${e.summary}.`,
      ...notes,
    ].join('\n'),
    tags: ['from-trace'],
    clock: { start: first.at },
    users: cast.users,
    bots: [{ file: o.botFile, as: bot, ...(vars && Object.keys(vars).length ? { vars } : {}) }],
    steps,
  };
  return `${scenarioSchemaLine(o.dir ?? 'scenarios')}${stringify(doc, { lineWidth: 0 })}`;
}

/** The PIN of who caused an event, as the trigger names them. Internal. */
function pinOf(e: Record<string, unknown>, type: string): string | undefined {
  const fields: Record<string, string> = {
    'transfer.received': 'sender',
    'message.received': 'sender',
    'transfer.accepted': 'recipient',
    'transfer.declined': 'recipient',
    'contact_request.received': 'requester',
    'contact.added': 'contact',
  };
  return user(e[fields[type] ?? 'introducer']).pin_code;
}

/** What the bot is expected to have done in the run: each step of each rule that ran. Internal. */
function expected(
  run: Trace[],
  made: Recreated & { bot: string; type: string },
  notes: string[],
): Array<Record<string, unknown>> {
  const steps: Array<Record<string, unknown>> = [];
  for (const t of run) {
    if (t.outcome === 'not_run') {
      notes.push(`rule ${t.rule} did not run: ${t.reason}${t.message ? ` (${t.message})` : ''}`);
      continue;
    }
    for (const s of t.steps) steps.push(...expectationsOf(t.rule, s, made, notes));
  }
  if (!run.some((t) => t.outcome !== 'not_run'))
    steps.push({ expect_none: { message: { from: made.bot, to: made.replyTo ?? made.actor }, within: WITHIN } });
  return steps;
}

/** What the bot's `accept`/`decline` makes happen, by the event it answered. Internal. */
function answered(
  action: 'accept' | 'decline',
  made: Recreated & { bot: string; type: string },
): Array<Record<string, unknown>> {
  const status = action === 'accept' ? 'accepted' : 'declined';
  const from = made.actor;
  if (made.type === 'contact_request.received')
    return [{ expect_event: { contact_request: { from, to: made.bot, status }, within: WITHIN } }];
  if (made.type === 'introduction.received') {
    // an accept that is not the last leaves it pending: the others accept, then it is accepted
    const accepts = (action === 'accept' ? (made.others ?? []) : []).map((p) => ({
      name: `${p} accepts too`,
      as: p,
      request: 'POST /introductions/{{ intro }}/accept',
      expect: ok(200),
    }));
    return [...accepts, { expect_event: { introduction: { by: from, to: made.bot, status }, within: WITHIN } }];
  }
  return [{ expect_event: { transfer: { from, to: made.bot, status }, within: WITHIN } }];
}

/** What one step of the run is expected to have done. Internal. */
function expectationsOf(
  rule: string,
  s: Trace['steps'][number],
  made: Recreated & { bot: string; type: string },
  notes: string[],
): Array<Record<string, unknown>> {
  if (s.status !== 'done') {
    notes.push(
      `rule ${rule} step ${s.index} (${s.action}) was ${s.status}${s.error ? `: ${s.error}` : ''}; not expected here`,
    );
    return [];
  }
  const result = (s.result && typeof s.result === 'object' ? s.result : {}) as Record<string, unknown>;
  if (s.action === 'reply') {
    const content =
      typeof result.content === 'string' ? result.content : typeof s.args === 'string' ? s.args : undefined;
    const to = made.replyTo ?? made.actor;
    return [
      {
        expect_event: {
          message: { from: made.bot, to, ...(content !== undefined ? { content } : {}) },
          within: WITHIN,
        },
      },
    ];
  }
  if (s.action === 'accept' || s.action === 'decline') return answered(s.action, made);
  if (s.action !== 'choose')
    notes.push(`rule ${rule} step ${s.index} (${s.action}) is not checked: add its expectation by hand`);
  return [];
}
