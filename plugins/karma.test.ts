import { afterEach, describe, expect, it } from 'vitest';
import { createTestWorld, type TestWorld } from 'pinbot/testing';
import karma from './karma.js';

const BOT = `name: karma
as: kbot
rules:
  - id: ask
    on: message.received
    if: { content: { matches: "^!karma" } }
    do:
      - karma.answer: {}
  - id: count
    on: message.received
    if: { content: { matches: "\\\\+\\\\+|thank", flags: i } }
    do:
      - karma.count: {}
`;

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('karma', () => {
  it('counts thanks and ++ in a group, answers !karma, and keeps counting after a restart', async () => {
    world = await createTestWorld({
      users: { alice: {}, bob: {}, carol: {}, kbot: {} },
      config: { rate_limits: { enabled: false } },
      plugins: [karma],
      bots: [BOT],
    });
    const { alice, bob, carol, kbot } = world.users as Required<typeof world.users>;
    const group = await alice!.api.conversations.create({
      name: 'team',
      participant_pins: [bob!.pin_code, carol!.pin_code, kbot!.pin_code],
    });
    const say = (who: typeof alice, text: string) => who!.api.conversations.send(group.id, { content: text });
    await say(alice, 'thanks @bob for the review');
    await say(carol, `${bob!.pin_code}++ and @alice++`);
    await say(bob, 'thanks @bob, me'); // nobody gives themselves karma
    await world.advance('5s');
    await say(bob, '!karma');
    await say(alice, '!karma @bob');
    await world.advance('5s');
    const said = async () =>
      (await alice!.api.conversations.messages(group.id, { limit: 100 })).messages
        .filter((m) => m.sender.id === kbot!.id)
        .map((m) => m.content);
    expect(await said()).toEqual([
      'bob now has 1 karma',
      'bob now has 2 karma, alice now has 1 karma',
      'bob has 2 karma',
      'bob has 2 karma',
    ]);
    expect(await world.state('karma', 'karma')).toEqual({
      [bob!.pin_code]: { n: 2, name: 'bob' },
      [alice!.pin_code]: { n: 1, name: 'alice' },
    });

    await world.restart();
    await world.users.carol!.api.conversations.send(group.id, { content: 'thanks again @bob' });
    await world.advance('5s');
    await world.users.carol!.api.conversations.send(group.id, { content: '!karma top' });
    await world.advance('5s');
    expect((await said()).slice(-2)).toEqual(['bob now has 3 karma', '1. bob 3\n2. alice 1']);
  });

  it('a thank-you in a direct conversation goes to the bot; karma.min is a condition', async () => {
    const bot =
      `${BOT}  - id: vip\n    on: message.received\n    if: { karma.min: 1, content: ` +
      `vip }\n    do:\n      - reply: "welcome, VIP"\n`;
    world = await createTestWorld({
      users: { alice: {}, kbot: {} },
      config: { rate_limits: { enabled: false } },
      plugins: [karma],
      bots: [bot],
    });
    await world.as('kbot').send('alice', 'hello'); // so that alice has karma to give… and none herself
    await world.as('alice').send('kbot', 'vip');
    await world.as('alice').send('kbot', 'Thank you!');
    await world.advance('5s');
    expect((await world.inbox('alice')).map((m) => m.content)).toEqual(['hello', 'kbot now has 1 karma']);
    const vip = world.traces('karma').find((t) => t.rule === 'vip' && t.event.summary.includes('"vip"'))!;
    expect(vip).toMatchObject({ outcome: 'not_run', reason: 'condition_false' });
    expect(JSON.stringify(vip.conditions)).toContain('sender has 0');
  });

  it('made-up PINs give nobody karma: only people in the conversation are counted (issue 21, item 6)', async () => {
    world = await createTestWorld({
      users: { alice: {}, bob: {}, kbot: {} },
      config: { rate_limits: { enabled: false } },
      plugins: [karma],
      bots: [BOT],
    });
    const { alice, bob, kbot } = world.users as Required<typeof world.users>;
    const group = await alice!.api.conversations.create({
      name: 'team',
      participant_pins: [bob!.pin_code, kbot!.pin_code],
    });
    // 440 made-up PINs (on main: 440 users of karma, 440 durable writes, on top of !karma top)
    const made = Array.from({ length: 440 }, (_, i) => `Q${String(i).padStart(5, '0')}++`).join(' ');
    await alice!.api.conversations.send(group.id, { content: `${made} ${bob!.pin_code}++` });
    await world.advance('5s');
    expect(await world.state('karma', 'karma')).toEqual({ [bob!.pin_code]: { n: 1, name: 'bob' } });
  });

  it('a message gives at most max_per_message points (default 5), the first people it names', async () => {
    const names = ['bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi'];
    world = await createTestWorld({
      users: { alice: {}, kbot: {}, ...Object.fromEntries(names.map((n) => [n, {}])) },
      config: { rate_limits: { enabled: false } },
      plugins: [karma],
      bots: [BOT],
    });
    const users = world.users as Required<typeof world.users>;
    const group = await users.alice!.api.conversations.create({
      name: 'team',
      participant_pins: [...names, 'kbot'].map((n) => users[n]!.pin_code),
    });
    await users.alice!.api.conversations.send(group.id, { content: `thanks ${names.map((n) => `@${n}`).join(' ')}` });
    await world.advance('5s');
    expect(
      Object.values((await world.state('karma', 'karma')) as Record<string, { name: string }>)
        .map((k) => k.name)
        .sort(),
    ).toEqual(names.slice(0, 5)); // on main: all 7
  });

  it(
    'state has a bound per bot (plugins.state.max_keys): past it the step fails with ' +
      'why, and nothing more is written (issue 21, item 6)',
    async () => {
      world = await createTestWorld({
        users: { alice: {}, bob: {}, carol: {}, dave: {}, erin: {}, kbot: {} },
        config: {
          rate_limits: { enabled: false },
          plugins: { config: { karma: { max_per_message: 2 } }, state: { max_keys: 3 } },
        },
        plugins: [karma],
        bots: [BOT],
      });
      const { alice, bob, carol, dave, erin, kbot } = world.users as Required<typeof world.users>;
      const group = await alice!.api.conversations.create({
        name: 'team',
        participant_pins: [bob!, carol!, dave!, erin!, kbot!].map((u) => u.pin_code),
      });
      const say = (text: string) => alice!.api.conversations.send(group.id, { content: text });
      await say('thanks @bob @carol @dave @erin'); // four named, max_per_message 2: two points
      await world.advance('5s');
      expect(Object.keys((await world.state('karma', 'karma')) as object).sort()).toEqual(
        [bob!.pin_code, carol!.pin_code].sort(),
      );
      // plugins.state.max_keys: 3 — dave fits, erin does not
      await say('thanks @dave @erin');
      await world.advance('5s');
      const full = world
        .traces('karma')
        .filter((t) => t.rule === 'count')
        .at(-1)!;
      expect(full).toMatchObject({
        outcome: 'failed',
        reason: 'limit',
        message: expect.stringContaining(
          'the state of plugin karma for bot karma is full: 3 keys, at most 3 ' +
            '(plugins.state.max_keys); nothing was written',
        ),
      });
      expect(Object.keys((await world.state('karma', 'karma')) as object)).toHaveLength(3);
      // a bound is not the plugin's failure
      expect(world.plugins()[0]).toMatchObject({ name: 'karma', status: 'running' });
    },
  );
});
