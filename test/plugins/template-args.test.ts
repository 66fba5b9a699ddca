import { afterEach, describe, expect, it } from 'vitest';
import { createTestWorld, type TestWorld } from 'pinbot/testing';
import { definePlugin } from '../../src/plugin-api/define.js';

/**
 * A plugin argument typed as a number (or boolean) may come from a template: the literal parts
 * are checked when the bot file loads, the rendered value when the step runs, coerced as
 * send_money reads its amount (issue 20, item 8).
 */

const DICE = definePlugin({
  name: 'dice',
  version: '1.0.0',
  pinbot: '^0.1.0',
  actions: {
    roll: {
      effect: 'local',
      schema: {
        type: 'object',
        additionalProperties: false,
        required: ['max'],
        properties: { max: { type: 'integer', minimum: 1, maximum: 100 }, loud: { type: 'boolean' } },
      },
      run: async (_ctx, args) => ({ max: args.max, kind: typeof args.max, loud: args.loud ?? false }),
    },
  },
});

const bot = (args: string) =>
  `name: dicer\nas: dicer\nrules:\n  - id: roll\n    on: message.received\n    if: { ` +
  `content: { matches: "^roll (?<max>\\\\w+)" } }\n    do:\n      - dice.roll: ` +
  `${args}\n      - reply: "rolled a d{{ steps[0].max }}"\n`;

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('plugin arguments from templates', () => {
  it('an integer from a template loads, and runs with the rendered number', async () => {
    world = await createTestWorld({ users: { alice: {}, dicer: {} }, plugins: [DICE] });
    await world.addBot(
      bot('{ max: "{{ match.max }}", loud: "{% if match.max == \'6\' %}true{% else %}false{% endif %}" }'),
    );
    await world.as('alice').send('dicer', 'roll 6');
    await world.settle();
    const [t] = world.traces('dicer');
    expect(t).toMatchObject({ outcome: 'done' });
    expect(t!.steps[0]).toMatchObject({ status: 'done', result: { max: 6, kind: 'number', loud: true } });
    expect((await world.inbox('alice')).map((m) => m.content)).toEqual(['rolled a d6']);
  });

  it(
    'the rendered value is checked when the step runs: text that is no number fails the ' + 'step, naming the argument',
    async () => {
      world = await createTestWorld({ users: { alice: {}, dicer: {} }, plugins: [DICE] });
      await world.addBot(bot('{ max: "{{ match.max }}" }'));
      await world.as('alice').send('dicer', 'roll many');
      await world.as('alice').send('dicer', 'roll 1000');
      await world.settle();
      const failed = world.traces('dicer').map((t) => t.message);
      expect(failed).toContain(
        'step 1 (dice.roll) failed: the arguments of dice.roll after templates do not ' +
          'fit its schema: args.max must be integer, not "many"',
      );
      expect(failed).toContain(
        'step 1 (dice.roll) failed: the arguments of dice.roll after templates do not ' +
          'fit its schema: args.max must be <= 100',
      );
    },
  );

  it(
    'literals are still checked at load: a word is neither a number nor a template, 0 ' + 'is below the minimum',
    async () => {
      world = await createTestWorld({ users: { alice: {}, dicer: {} }, plugins: [DICE] });
      await expect(world.addBot(bot('{ max: six }'))).rejects.toThrow(
        new RegExp(
          String.raw`rules\.0\.do\.0\.dice\.roll\.max: expected an integer, not "six" — ` +
            String.raw`write the value, or a template such as "\{\{ match\.max \}\}"`,
        ),
      );
      await expect(world.addBot(bot('{ max: 0 }'))).rejects.toThrow(/rules\.0\.do\.0\.dice\.roll\.max: must be >= 1/);
    },
  );
});
