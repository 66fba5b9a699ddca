import { stringify } from 'yaml';
import type { Trace } from '../runtime/index.js';
import { USER_NAME_PATTERN } from './schema.js';

/** What the scenario is made from: a bot's traces, which run, and where its file is from the scenario. */
export interface FromTraceInput {
  /** The bot's traces (any order); the run's traces are those of one event. */
  traces: Trace[];
  /** The run: its event's key (`transfer.received:txn_…`), the event id alone (`txn_…`), or `last`. */
  run: string;
  /** The bot file, as the scenario names it (relative to the scenario file). */
  botFile: string;
}

/** A run that cannot be turned into a scenario, with what to do. */
export class FromTraceError extends Error {}

const WITHIN = '1m';

/**
 * A scenario user name from a display name: the display name itself when it is a valid user
 * name (scenario users are created with their name as display name, and replies often quote
 * it), else a slug (`Tip Jar` → `tip_jar` where a template names the user). Internal.
 */
function userName(display: string, taken: Set<string>, inTemplates = false): string {
  if (
    new RegExp(USER_NAME_PATTERN).test(display) &&
    !(inTemplates && /[^A-Za-z0-9_]/.test(display)) &&
    !taken.has(display)
  ) {
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
      `no run of this bot for ${JSON.stringify(run)} in its recorded traces; ${recent.length ? `the latest are:\n${recent.join('\n')}\ngive an event id (e.g. ${recent.at(-1)!.trim().split(/\s/)[0]!.split(':').pop()}) or last` : 'it has none yet'}`,
    );
  }
  return byStart.filter((t) => t.event.key === key);
}

/**
 * A scenario that recreates one run of a bot — the users (the sender with the balance the event
 * needs, the bot's user, their contact if the conditions saw one), the bot file with the
 * variables it had, the request that caused the event — and expects what the bot did (each
 * reply, accept and decline), so a real incident becomes a regression test in one command.
 *
 * @example process.stdout.write(scenarioFromTrace({ traces, run: 'last', botFile: '../bots/tip-jar.yaml' }));
 */
export function scenarioFromTrace(o: FromTraceInput): string {
  const run = runTraces(o.traces, o.run);
  const first = run[0]!;
  const e = first.event;
  if (!e.payload)
    throw new FromTraceError(
      `the run of ${e.key} has no recorded event (${e.payload_omitted ? 'it was too large to keep' : 'it was traced by an older pinbot'}): write this scenario by hand`,
    );
  const sender = e.payload.sender as { display_name?: string; pin_code?: string } | undefined;
  const me = run.find((t) => t.seen?.me)?.seen?.me;
  if (!sender?.display_name || !me)
    throw new FromTraceError(
      `the run of ${e.key} does not say who caused it or who the bot is: only runs recorded by this pinbot can be turned into scenarios`,
    );
  const taken = new Set<string>();
  const from = userName(sender.display_name, taken);
  const bot = userName(me.display_name, taken, true);
  const contact = run.some((t) => t.seen?.contacts?.[sender.pin_code ?? ''] === true);
  const users: Record<string, Record<string, unknown>> = { [from]: {}, [bot]: {} };
  if (contact) users[from]!.contacts = [bot];
  const steps: Array<Record<string, unknown>> = [];
  if (e.type === 'transfer.received') {
    users[from]!.balance = Number(e.payload.amount);
    const body = {
      recipient_pin: `{{ users.${bot}.pin_code }}`,
      amount: e.payload.amount,
      ...(typeof e.payload.note === 'string' ? { note: e.payload.note } : {}),
    };
    steps.push({
      name: `${from} sends the transfer the bot received`,
      as: from,
      request: 'POST /wallet/send',
      body,
      expect: { status: 201 },
    });
  } else if (e.type === 'message.received') {
    steps.push({
      name: `${from} sends the message the bot received`,
      as: from,
      request: 'POST /messages/send',
      body: { recipient_pin: `{{ users.${bot}.pin_code }}`, content: e.payload.content },
      expect: { status: 201 },
    });
  } else {
    throw new FromTraceError(
      `a ${e.type} event cannot be recreated by a scenario yet (transfer.received and message.received can): write its steps by hand`,
    );
  }
  const notes: string[] = [];
  for (const t of run) {
    if (t.outcome === 'not_run') {
      notes.push(`rule ${t.rule} did not run: ${t.reason}${t.message ? ` (${t.message})` : ''}`);
      continue;
    }
    for (const s of t.steps) steps.push(...expectationsOf(t.rule, s, from, bot, notes));
  }
  if (!run.some((t) => t.outcome !== 'not_run'))
    steps.push({ expect_none: { message: { from: bot, to: from }, within: WITHIN } });
  const vars = run.find((t) => t.seen?.vars)?.seen?.vars;
  const doc = {
    name: `${first.bot}: ${e.summary.replace(/\s+from .*$/, '')} from ${from} (run of ${first.at})`,
    description: [
      `Made by pinbot bots trace ${first.bot} --scenario ${e.key.split(':').pop()} from the run at ${first.at}: ${e.summary}.`,
      ...notes,
    ].join('\n'),
    tags: ['from-trace'],
    clock: { start: first.at },
    users,
    bots: [{ file: o.botFile, as: bot, ...(vars && Object.keys(vars).length ? { vars } : {}) }],
    steps,
  };
  return `# yaml-language-server: $schema=../schemas/scenario.schema.json\n${stringify(doc, { lineWidth: 0 })}`;
}

/** What one step of the run is expected to have done. Internal. */
function expectationsOf(
  rule: string,
  s: Trace['steps'][number],
  from: string,
  bot: string,
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
    return [
      {
        expect_event: {
          message: { from: bot, to: from, ...(content !== undefined ? { content } : {}) },
          within: WITHIN,
        },
      },
    ];
  }
  if (s.action === 'accept' || s.action === 'decline') {
    return [
      {
        expect_event: {
          transfer: { from, to: bot, status: s.action === 'accept' ? 'accepted' : 'declined' },
          within: WITHIN,
        },
      },
    ];
  }
  if (s.action !== 'choose')
    notes.push(`rule ${rule} step ${s.index} (${s.action}) is not checked: add its expectation by hand`);
  return [];
}
