import { parseDuration, DURATION_PATTERN } from '../../util/duration.js';
import {
  describeEvent,
  EVENT_FILTERS,
  EVENT_KINDS,
  eventMismatches,
  type EventKind,
  type ScenarioEvent,
} from '../events.js';
import { checkMatchers, formatMismatches, type Mismatch } from '../match.js';
import { checkSavePath, readPath } from '../save-path.js';
import { humanDuration } from '../human-duration.js';
import { StepFailure, type CheckContext, type EventWindow, type StepContext, type StepKind } from '../types.js';

interface EventSpec {
  within: string;
  every?: string;
  [kind: string]: unknown;
}

const DEFAULT_EVERY_MS = 500;

const filterSchema = (what: string) => ({
  type: 'object',
  additionalProperties: false,
  minProperties: 2,
  maxProperties: 3,
  required: ['within'],
  description: `${what}: one event kind with its filter, and within`,
  properties: {
    ...Object.fromEntries(
      EVENT_KINDS.map((k) => [
        k,
        {
          type: 'object',
          additionalProperties: false,
          description: EVENT_FILTERS[k].description,
          properties: EVENT_FILTERS[k].properties,
        },
      ]),
    ),
    within: { type: 'string', pattern: DURATION_PATTERN, description: 'how long (scenario time): 10s, 2h, 1d' },
    every: {
      type: 'string',
      pattern: DURATION_PATTERN,
      description: 'remote mode: how often to look (default 500ms); on the virtual clock every due timer is a look',
    },
  },
});

function kindOf(spec: EventSpec): EventKind {
  return EVENT_KINDS.find((k) => k in spec)!;
}

function checkSpec(key: 'expect_event' | 'expect_none', spec: EventSpec, c: CheckContext): void {
  const kinds = EVENT_KINDS.filter((k) => k in spec);
  if (kinds.length !== 1)
    return c.problem(
      [key],
      `expected exactly one event kind (${EVENT_KINDS.join(', ')}), found ` +
        `${kinds.length ? kinds.join(' and ') : 'none'}`,
    );
  const kind = kinds[0]!;
  const filter = (spec[kind] ?? {}) as Record<string, unknown>;
  for (const u of EVENT_FILTERS[kind].users) if (filter[u] !== undefined) c.user(filter[u], [key, kind, u]);
  c.templates(filter, [key, kind]);
  for (const p of checkMatchers(filter, [key, kind])) c.problem(p.path, p.message);
}

const label = (key: string) => (s: Record<string, EventSpec>) => {
  const spec = s[key]!;
  const kind = kindOf(spec);
  const f = (spec[kind] ?? {}) as Record<string, unknown>;
  const who = ['from', 'by', 'to']
    .filter((k) => typeof f[k] === 'string')
    .map((k) => `${k} ${f[k]}`)
    .join(' ');
  return `${key} ${kind}${who ? ` ${who}` : ''} within ${spec.within}`;
};

function closest(kind: EventKind, filter: Record<string, unknown>, evs: ScenarioEvent[], ctx: StepContext): string {
  let best: { ev: ScenarioEvent; mm: Mismatch[] } | undefined;
  for (const ev of evs) {
    const mm = eventMismatches(kind, filter, ev, ctx.target.users);
    if (!best || mm.length < best.mm.length) best = { ev, mm };
  }
  if (!best) return `  no ${kind} happened at all`;
  return `  closest: ${ctx.mask(describeEvent(best.ev))}\n${formatMismatches(best.mm, ctx.mask)}`;
}

export const expectEventStep: StepKind<{ expect_event: EventSpec; save?: Record<string, string> }> = {
  name: 'expect_event',
  acts: false,
  description:
    'waits for something a bot (or anyone) causes — a message, a transfer, an ' +
    'introduction, a contact request — within a duration; on the virtual clock it ' +
    'advances to each next due timer until the event is seen. Each event is matched ' +
    'once, one caused since the last step that acted first',
  schema: {
    properties: {
      expect_event: filterSchema('what to wait for'),
      save: {
        type: 'object',
        additionalProperties: { type: 'string' },
        description: 'captures from the event: name → field path (content, from.pin_code, id)',
      },
    },
    required: ['expect_event'],
  },
  label: label('expect_event') as never,
  windowKinds: (s) => [kindOf(s.expect_event)],
  check(s, c) {
    checkSpec('expect_event', s.expect_event, c);
    for (const [name, path] of Object.entries(s.save ?? {})) {
      const bad = checkSavePath(path);
      if (bad) c.problem(['save', name], bad);
      c.declare(name);
    }
  },
  async run(s, ctx) {
    const spec = s.expect_event;
    const kind = kindOf(spec);
    const filter = ctx.render<Record<string, unknown>>(spec[kind] ?? {});
    const within = parseDuration(spec.within)!;
    const every = spec.every ? parseDuration(spec.every)! : DEFAULT_EVERY_MS;
    const started = ctx.target.now();
    const deadline = started + within;
    let evs: ScenarioEvent[] = [];
    let changed = true;
    for (;;) {
      if (changed) {
        evs = (await ctx.target.events(kind)).filter((e) => !ctx.claimed.has(e.key));
        const hits = evs.filter((e) => eventMismatches(kind, filter, e, ctx.target.users).length === 0);
        // one caused by the last step that acted first, so an older unmatched one is not taken for it
        const hit = hits.find((e) => !ctx.window?.known.get(kind)?.has(e.key)) ?? hits[0];
        if (hit) {
          ctx.claimed.add(hit.key);
          for (const [name, path] of Object.entries(s.save ?? {}))
            ctx.capture(name, readPath({ body: hit.fields }, path));
          return { detail: `${ctx.mask(describeEvent(hit))} after ${humanDuration(ctx.target.now() - started)}` };
        }
      }
      if (ctx.target.now() >= deadline) break;
      changed = await ctx.target.stepToward(deadline, every);
    }
    const diff = closest(kind, filter, evs, ctx) + botRunsHint(ctx);
    throw new StepFailure(`no ${kind} matching ${JSON.stringify(filter)} within ${spec.within}`, { diff });
  },
};

const MAX_RUN_LINES = 6;

/** `since step 3 started`, or `since the scenario started`. Internal. */
const windowSince = (w: EventWindow | undefined) =>
  !w || w.step === 'start' ? 'since the scenario started' : `since step ${w.step} started`;

/**
 * Why nothing came, from the bots' side: the runs of the scenario's bots since the window
 * opened (the last step that acted) that failed or did not run, with their trace reasons —
 * failures first. A loop guard holding back gets its advice. Internal.
 */
function botRunsHint(ctx: StepContext): string {
  const notes = ctx.target.botRuns?.(ctx.window?.at ?? 0) ?? [];
  if (!notes.length) return '';
  const rank = (reason: string) => (reason === 'condition_false' ? 2 : reason === 'loop_suspected' ? 1 : 0);
  const sorted = [...notes].sort((a, b) => rank(a.reason) - rank(b.reason));
  const lines = sorted.slice(0, MAX_RUN_LINES).map((n) => ctx.mask(n.line));
  if (notes.length > MAX_RUN_LINES)
    lines.push(`  … and ${notes.length - MAX_RUN_LINES} more: pinbot bots trace ${notes[0]!.bot}`);
  if (notes.some((n) => n.reason === 'loop_suspected')) {
    lines.push(
      '  (a scripted user answering a bot at once, again and again, looks like a loop: let time pass between rounds, ' +
        'e.g. clock: { advance: 3s }, or give the bot loop_guard: false — docs/bots.md "Loops")',
    );
  }
  return `\n  the scenario's bots ${windowSince(ctx.window)}:\n${lines.join('\n')}`;
}

/**
 * `expect_none`: "do X, then nothing happens". Its window opens when the last step that acted
 * before it starts — a request, a clock move, a restart, a `use:` that acts; never an
 * `expect_event` or another step that only looks — so what that step caused counts (a bot
 * woken by a request answers while the request settles, and a second answer is not hidden by
 * an `expect_event` of the first). It closes `within` after `expect_none` starts. Events an
 * `expect_event` matched are not counted.
 */
export const expectNoneStep: StepKind<{ expect_none: EventSpec }> = {
  name: 'expect_none',
  acts: false,
  description:
    'asserts that nothing of a kind (matching the filter) happens from the start of ' +
    'the last step before it that acted (a request, a clock move, a restart, a use:) ' +
    'until `within` after this step starts: it lets exactly that much scenario time ' +
    'pass, then checks. Events matched by an expect_event are not counted',
  schema: { properties: { expect_none: filterSchema('what must not happen') }, required: ['expect_none'] },
  label: label('expect_none') as never,
  check: (s, c) => checkSpec('expect_none', s.expect_none, c),
  windowKinds: (s) => [kindOf(s.expect_none)],
  async run(s, ctx) {
    const spec = s.expect_none;
    const kind = kindOf(spec);
    const filter = ctx.render<Record<string, unknown>>(spec[kind] ?? {});
    // the window opened when the last step that acted before this one started (see windowOpeners)
    const before = ctx.window?.known.get(kind) ?? new Set((await ctx.target.events(kind)).map((e) => e.key));
    const since = ctx.window ? windowSince(ctx.window) : 'since this step started';
    await ctx.target.wait(parseDuration(spec.within)!);
    const seen = (await ctx.target.events(kind)).filter(
      (e) =>
        !before.has(e.key) &&
        !ctx.claimed.has(e.key) &&
        eventMismatches(kind, filter, e, ctx.target.users).length === 0,
    );
    if (seen.length) {
      throw new StepFailure(
        `expected no ${kind} matching ${JSON.stringify(filter)} ${since} and within ` +
          `${spec.within} after; ${seen.length} happened`,
        {
          diff: seen
            .slice(0, 5)
            .map((e) => `  + ${ctx.mask(describeEvent(e))}`)
            .join('\n'),
        },
      );
    }
    return { detail: `none ${since} and ${spec.within} after` };
  },
};
