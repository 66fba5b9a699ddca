/** A plugin whose action asks twice (ctx.ask), a plain object (no import needed in a temp folder). */
export const ASKING_PLUGIN = `export default {
  name: 'porder',
  version: '1.0.0',
  pinbot: '>=0.1.0',
  actions: {
    order: {
      schema: { type: 'object' },
      async run(ctx) {
        await ctx.reply('Welcome');
        const size = await ctx.ask({ question: 'What size?', expect: { choice: ['small', 'large'] } });
        const count = await ctx.ask({ question: 'How many ' + size + '?', expect: 'number' });
        const n = await ctx.state.update('orders', (n = 0) => n + 1);
        await ctx.reply('Ordered ' + count + ' ' + size + ' (order ' + n + ')');
      },
    },
  },
};
`;

/** The shop's rule that runs the asking plugin. */
export const PLUGIN_RULE = `  - id: porder
    on: message.received
    if: { content: { matches: "^porder$" } }
    do: [ { porder.order: {} } ]
`;
