/** The files `pinbot plugins new NAME` writes. Internal. */

/** `plugins/NAME.ts`: an action, one that asks (ctx.ask), one setting, ready to edit. */
export function pluginSource(name: string, hostVersion: string): string {
  return `import { definePlugin } from 'pinbot/plugin';

/**
 * ${name}: a pinbot plugin. Use its actions in a bot file:
 *
 *   - on: message.received
 *     do:
 *       - ${name}.greet: { name: "{{ event.sender.display_name }}" }
 *
 * and \`${name}.welcome: {}\`, which asks a question and waits for the answer (ctx.ask).
 * pinbot's docs/plugins.md (node_modules/pinbot/docs/ in a project) has the whole API: state,
 * schedule, event sources, the test kit.
 */
export default definePlugin({
  name: '${name}',
  version: '0.1.0',
  pinbot: '^${hostVersion}',
  description: 'Greets whoever wrote to the bot.',
  // settings under plugins.config.${name} in config.yaml, checked at load
  configSchema: {
    type: 'object',
    properties: { greeting: { type: 'string', default: 'Hello' } },
    additionalProperties: false,
  },
  actions: {
    greet: {
      description: 'Replies "<greeting>, <name>!" to whoever caused the event.',
      schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false },
      async run(ctx, args) {
        const text = \`\${ctx.config.greeting}, \${args.name}!\`;
        await ctx.reply(text);
        return { text };
      },
    },
    welcome: {
      description: 'Asks the name of whoever wrote, then greets them by it.',
      schema: { type: 'object', properties: {}, additionalProperties: false },
      async run(ctx) {
        // a dialog: the run waits for this person's next message in this conversation (no
        // answer in 10 minutes: the rule's on_timeout runs). With the answer the action runs
        // again from its start: ctx.ask gives the answer, what ctx.reply sent is not resent.
        const name = await ctx.ask({ question: 'What is your name?', timeout: '10m' });
        const text = \`\${ctx.config.greeting}, \${name}!\`;
        await ctx.reply(text);
        return { text };
      },
    },
  },
});
`;
}

/** `plugins/NAME.test.ts`: the plugin in a test world, driven as a user would. */
export function pluginTest(name: string): string {
  return `import { afterEach, expect, it } from 'vitest';
import { createTestWorld, type TestWorld } from 'pinbot/testing';
import plugin from './${name}.js';

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

it('${name}.greet replies to whoever wrote', async () => {
  world = await createTestWorld({
    users: { alice: {}, greeter: {} },
    plugins: [plugin],
    bots: [
      \`name: greeter
as: greeter
rules:
  - on: message.received
    do:
      - ${name}.greet: { name: "{{ event.sender.display_name }}" }
\`,
    ],
  });
  await world.as('alice').send('greeter', 'hi');
  await world.advance('5s'); // the bot polls every 5 s (virtual time)
  const replies = (await world.inbox('alice')).map((m) => m.content);
  expect(replies).toHaveLength(1);
  expect(replies[0]).toContain('alice');
  expect(world.traces('greeter').map((t) => t.outcome)).toEqual(['done']);
});

it('${name}.welcome asks the name, waits for the answer, then greets by it', async () => {
  world = await createTestWorld({
    users: { alice: {}, greeter: {} },
    plugins: [plugin],
    bots: [
      \`name: greeter
as: greeter
rules:
  - on: message.received
    if: { content: { matches: "^hi$" } }
    do:
      - ${name}.welcome: {}
\`,
    ],
  });
  await world.as('alice').send('greeter', 'hi');
  await world.advance('5s');
  expect((await world.inbox('alice')).map((m) => m.content)).toEqual(['What is your name?']);
  expect(world.dialogs('greeter').map((d) => d.name)).toEqual(['alice']); // she is in a dialog
  await world.as('alice').send('greeter', 'Alice'); // the answer: no rule runs on it
  await world.advance('5s');
  const texts = (await world.inbox('alice')).map((m) => m.content);
  expect(texts).toEqual(['What is your name?', 'Hello, Alice!']);
  expect(world.dialogs('greeter')).toEqual([]);
});
`;
}

/**
 * A bot file using the new plugin (printed, not written: the bots of bots/ run at the next
 * start). `schema` is the editor schema as seen from bots/, when there is one.
 */
export function exampleBot(name: string, schema?: string): string {
  return `${schema ? `# yaml-language-server: $schema=${schema}\n` : ''}name: ${name}-demo
as: ${name[0]!.toUpperCase()}${name.slice(1)} Bot
create_user: true
rules:
  - on: message.received
    do:
      - ${name}.greet: { name: "{{ event.sender.display_name }}" }
`;
}
