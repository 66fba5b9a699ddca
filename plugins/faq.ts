import { compileRegex, definePlugin, type LinearRegex } from 'pinbot/plugin';

/**
 * faq: answers questions from a table in its settings — each entry's `keywords` (all of them,
 * any case) or `match` (a regular expression, case-insensitive) against the message. `match`
 * runs on the linear-time engine of `pinbot/plugin` (`compileRegex`), never JavaScript's
 * backtracking RegExp: a message cannot stall the server whatever the pattern, and a pattern
 * the engine cannot run (a backreference, lookaround) is refused at start with its
 * config.yaml:line:col.
 *
 * ```yaml
 * # config.yaml
 * plugins:
 *   config:
 *     faq:
 *       questions:
 *         - { keywords: [open], answer: "Monday to Friday, 9:00 to 17:00." }
 *         - { match: "\\b(price|cost)s?\\b", answer: "A coffee is 2.50." }
 *       fallback: "I don't know that one; a person will answer."
 * # a bot
 * - on: message.received
 *   do: [ { faq.answer: {} } ]
 * ```
 */
export default definePlugin({
  name: 'faq',
  version: '1.0.0',
  pinbot: '^0.1.0',
  description: 'Answers questions from a table in config.yaml.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      questions: {
        type: 'array',
        default: [],
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['answer'],
          properties: {
            keywords: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
            match: {
              type: 'string',
              minLength: 1,
              format: 'regex',
              description: 'a regular expression (case-insensitive; RE2 syntax: no backreferences or lookaround)',
            },
            answer: { type: 'string', minLength: 1 },
          },
          anyOf: [{ required: ['keywords'] }, { required: ['match'] }],
        },
      },
      fallback: { type: 'string', description: 'the answer when no question matches (default: none)' },
    },
  },
  actions: {
    answer: {
      description: 'Replies with the answer of the first question the message matches (or the fallback).',
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: { text: { type: 'string', description: 'what to look up (default: the message)' } },
      },
      async run(ctx, args) {
        const i = find(ctx.config.questions, args.text ?? String(ctx.event.content ?? ''));
        const answer = i === -1 ? ctx.config.fallback : ctx.config.questions[i]!.answer;
        if (answer) await ctx.reply(answer);
        return { question: i === -1 ? null : i, answered: !!answer };
      },
    },
  },
  conditions: {
    known: {
      description: 'Whether the message matches a question of the table (true) or not (false).',
      schema: { type: 'boolean' },
      example: true,
      test: (ctx, want) => (find(ctx.config.questions, String(ctx.event.content ?? '')) !== -1) === want,
    },
  },
});

type Question = { keywords?: string[]; match?: string };

/** The compiled `match` of each question, once per settings object. Internal. */
const compiled = new WeakMap<Question[], Array<LinearRegex | undefined>>();

/** The index of the first question `text` matches, or -1. Internal. */
function find(questions: Question[], text: string): number {
  let res = compiled.get(questions);
  if (!res)
    compiled.set(
      questions,
      (res = questions.map((q) => (q.match === undefined ? undefined : compileRegex(q.match, 'i')))),
    );
  const lower = text.toLowerCase();
  return questions.findIndex(
    (q, i) => res[i]?.test(text) ?? (q.keywords ?? []).every((k) => lower.includes(k.toLowerCase())),
  );
}
