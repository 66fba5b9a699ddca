import { compileRegex, definePlugin, type LinearRegex, type UserRef } from 'pinbot/plugin';

interface Karma {
  n: number;
  name: string;
}

const squash = (s: string) => s.replace(/\s+/g, '').toLowerCase();

/**
 * The users a message names: `@Name` or a PIN, of the people in the conversation only — a
 * made-up PIN names nobody, so a message cannot create karma for users that do not exist (each
 * one was a durable write: issue 21, item 6). Internal.
 */
function named(content: string, people: UserRef[]): { users: UserRef[]; plus: UserRef[] } {
  const users: UserRef[] = [];
  const plus: UserRef[] = [];
  for (const m of content.matchAll(/(?:@([\p{L}\p{N}_.-]+)|\b([A-Z0-9]{6})\b)(\+\+)?/gu)) {
    const u = m[1]
      ? people.find((p) => squash(p.display_name) === m[1]!.toLowerCase())
      : people.find((p) => p.pin_code === m[2]);
    if (!u) continue;
    if (!users.some((x) => x.pin_code === u.pin_code)) users.push(u);
    if (m[3] && !plus.some((x) => x.pin_code === u.pin_code)) plus.push(u);
  }
  return { users, plus };
}

/** The thank-you words as one case-insensitive pattern, on the linear-time engine; once per settings. Internal. */
const thankYous = new WeakMap<string[], LinearRegex>();
function thankYou(words: string[]): LinearRegex {
  let re = thankYous.get(words);
  if (!re)
    thankYous.set(
      words,
      (re = compileRegex(
        `(^|\\W)(${words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})(\\W|$)`,
        'i',
      )),
    );
  return re;
}

/**
 * karma: counts thanks per user, in persistent state (per bot, surviving restarts), and
 * answers `!karma`. `@Name++` or `PIN++` gives a point; so does a thank-you word naming
 * someone (`thanks @Bob`), or a thank-you in a direct conversation with the bot (to the bot).
 * Nobody gives themselves karma; only people in the conversation get it, and a message gives at
 * most `max_per_message` points.
 *
 * ```yaml
 * - on: message.received
 *   if: { content: { matches: "^!karma" } }
 *   do: [ { karma.answer: {} } ]
 * - on: message.received
 *   if: { content: { matches: "\\+\\+|thank", flags: i } }
 *   do: [ { karma.count: {} } ]
 * ```
 */
export default definePlugin({
  name: 'karma',
  version: '1.0.0',
  pinbot: '^0.1.0',
  description: 'Counts thanks and ++ per user, and answers !karma.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      words: {
        type: 'array',
        items: { type: 'string', minLength: 1 },
        default: ['thanks', 'thank you', 'thx', 'merci'],
        description: 'what counts as a thank-you',
      },
      max_per_message: {
        type: 'integer',
        minimum: 1,
        maximum: 100,
        default: 5,
        description: 'points one message may give (one per person named, the first ones)',
      },
    },
  },
  actions: {
    count: {
      description: 'Gives a karma point to each user the message thanks or ++es, and says so.',
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: { quiet: { type: 'boolean', default: false, description: 'count without replying' } },
      },
      async run(ctx, args) {
        const content = String(ctx.event.content ?? '');
        const sender = ctx.event.sender as UserRef;
        const conversation = ctx.event.conversation as { type?: string; participants?: UserRef[] } | undefined;
        const people = conversation?.participants ?? [];
        const { users, plus } = named(content, people);
        const thanks = thankYou(ctx.config.words).test(content);
        let to = thanks ? users : plus;
        if (thanks && users.length === 0 && conversation?.type === 'direct') to = [ctx.me];
        to = to.filter((u) => u.pin_code !== sender.pin_code).slice(0, ctx.config.max_per_message);
        const given: Array<{ pin: string; karma: number }> = [];
        for (const u of to) {
          const k = await ctx.state.update<Karma>(u.pin_code, (cur) => ({
            n: (cur?.n ?? 0) + 1,
            name: u.display_name,
          }));
          given.push({ pin: u.pin_code, karma: k.n });
        }
        if (given.length && !args.quiet)
          await ctx.reply(to.map((u, i) => `${u.display_name} now has ${given[i]!.karma} karma`).join(', '));
        return { given };
      },
    },
    answer: {
      description:
        "Answers `!karma` (the sender's), `!karma @Name` or `!karma PIN` (theirs), `!karma top` (the five highest).",
      schema: { type: 'object', additionalProperties: false },
      async run(ctx) {
        const content = String(ctx.event.content ?? '').trim();
        const sender = ctx.event.sender as UserRef;
        const people = (ctx.event.conversation as { participants?: UserRef[] } | undefined)?.participants ?? [];
        if (/^!karma\s+top\b/i.test(content)) {
          const all = (await ctx.state.entries())
            .map(([, v]) => v as Karma)
            .sort((a, b) => b.n - a.n || a.name.localeCompare(b.name));
          const text = all.length
            ? all
                .slice(0, 5)
                .map((k, i) => `${i + 1}. ${k.name} ${k.n}`)
                .join('\n')
            : 'nobody has karma yet';
          await ctx.reply(text);
          return { top: all.slice(0, 5) };
        }
        const who = named(content, people).users[0] ?? sender;
        const k = await ctx.state.get<Karma>(who.pin_code);
        await ctx.reply(`${who.display_name} has ${k?.n ?? 0} karma`);
        return { pin: who.pin_code, karma: k?.n ?? 0 };
      },
    },
  },
  conditions: {
    min: {
      description: 'The sender has at least this much karma.',
      schema: { type: 'integer', minimum: 0 },
      example: 3,
      async test(ctx, min) {
        const n = (await ctx.state.get<Karma>((ctx.event.sender as UserRef).pin_code))?.n ?? 0;
        return { ok: n >= min, detail: `sender has ${n}` };
      },
    },
  },
});
