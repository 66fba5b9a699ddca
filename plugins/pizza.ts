import { DialogEnded, definePlugin } from 'pinbot/plugin';

/**
 * An order taken in a conversation, from TypeScript: `ctx.ask` asks the person and waits for
 * their answer (durably: a restart, a deploy or kill -9 while they think changes nothing).
 * The action runs again from its start after each answer, so everything before the last
 * question is either a `ctx.ask` (its recorded answer comes back), a `ctx.reply` / `ctx.send`
 * / `ctx.once` (their recorded results come back: nothing is sent twice), or code that gives
 * the same result each time. See docs/plugins.md "Asking".
 */
export default definePlugin({
  name: 'pizza',
  version: '1.0.0',
  pinbot: '>=0.1.0',
  configSchema: {
    type: 'object',
    properties: { sizes: { type: 'array', items: { type: 'string' }, default: ['small', 'medium', 'large'] } },
    additionalProperties: false,
  },
  actions: {
    order: {
      description: 'Asks for a size, a count and a confirmation; remembers the usual size of the person',
      schema: { type: 'object', properties: {}, additionalProperties: false },
      async run(ctx) {
        const usual = await ctx.once('usual', () => ctx.memory.get<string>('usual'));
        const size = await ctx.ask({
          question: `What size? ${ctx.config.sizes.join(', ')}${usual ? ` (your usual: ${usual})` : ''}`,
          expect: { choice: ctx.config.sizes },
          retry: `Please answer ${ctx.config.sizes.join(', ')}`,
          timeout: '10m',
        });
        const count = await ctx.ask({
          question: `How many ${size}?`,
          expect: { number: { min: 1, max: 10, integer: true } },
          timeout: '10m',
        });
        try {
          const ok = await ctx.ask({ question: `Confirm ${count} ${size}? yes or no`, expect: 'yes_no', attempts: 1 });
          if (!ok) {
            await ctx.reply('Not ordered.');
            return { ordered: false };
          }
        } catch (err) {
          if (!(err instanceof DialogEnded)) throw err; // let pinbot's own errors through
          await ctx.reply('No clear yes: not ordered.');
          return { ordered: false };
        }
        await ctx.memory.set('usual', size);
        await ctx.reply(`Ordered ${count} ${size}.`);
        return { ordered: true, size, count };
      },
    },
  },
});
