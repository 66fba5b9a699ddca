import { afterEach, describe, expect, it } from 'vitest';
import { createTestWorld, type TestWorld } from '../../src/testing/world.js';

/** Run modes and the limits on how often a rule runs. */

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const replies = async (name: string) => (await world!.inbox(name)).map((m) => m.content);
const outcomes = (bot: string) =>
  world!
    .traces(bot)
    .map((t) => `${t.event.summary.match(/"(.*)"/)?.[1]}: ${t.outcome}${t.reason ? ` ${t.reason}` : ''}`);

describe('mode single', () => {
  it('an event its conditions reject does not count as a run going on', async () => {
    world = await createTestWorld({ users: { alice: {}, desk: {} } });
    await world.addBot(`name: desk
as: desk
poll: 1h
rules:
  - id: slow
    mode: single
    on: message.received
    if: { content: { matches: "^slow" } }
    do:
      - wait: 1m
      - reply: "done {{ event.content }}"
`);
    await world.as('alice').send('desk', 'unrelated');
    await world.as('alice').send('desk', 'slow c');
    await world.as('alice').send('desk', 'slow d');
    await world.host.runner('desk')!.pollNow();
    await world.advance('2m');
    expect(await replies('alice')).toEqual(['done slow c']);
    expect(outcomes('desk').sort()).toEqual([
      'slow c: done',
      'slow d: not_run single_running',
      'unrelated: not_run condition_false',
    ]);
  });
});

describe('cooldown and throttle per sender or conversation', () => {
  it('cooldown per sender: one customer asking for a human does not silence the rule for everyone', async () => {
    world = await createTestWorld({ users: { alice: {}, bob: {}, desk: {} } });
    await world.addBot(`name: desk
as: desk
rules:
  - id: human
    on: message.received
    if: { content: { matches: "human", flags: i } }
    cooldown: { for: 1h, per: sender }
    do: [{ reply: "a human will call you" }]
`);
    await world.as('alice').send('desk', 'I want a human');
    await world.settle();
    await world.as('alice').send('desk', 'a HUMAN please');
    await world.as('bob').send('desk', 'human?');
    await world.settle();
    expect(await replies('alice')).toEqual(['a human will call you']);
    expect(await replies('bob')).toEqual(['a human will call you']);
    expect(world.traces('desk').find((t) => t.reason === 'cooldown')!.message).toMatch(
      /^cooldown for [A-Z0-9]{6}: 3600 s left$/,
    );
    await world.advance('61m');
    await world.as('alice').send('desk', 'human again');
    await world.settle();
    expect(await replies('alice')).toHaveLength(2);
  });

  it('throttle: at most max_runs runs within a time, per sender', async () => {
    world = await createTestWorld({ users: { alice: {}, bob: {}, desk: {} } });
    await world.addBot(
      `name: desk\nas: desk\nrules:\n  - id: answer\n    on: message.received\n    ` +
        `throttle: { max_runs: 2, within: 1h, per: sender }\n    do: [{ reply: "ok {{ ` +
        `event.content }}" }]\n`,
    );
    for (const m of ['a1', 'a2', 'a3']) await world.as('alice').send('desk', m);
    await world.as('bob').send('desk', 'b1');
    await world.settle();
    expect(await replies('alice')).toEqual(['ok a1', 'ok a2']);
    expect(await replies('bob')).toEqual(['ok b1']);
    expect(outcomes('desk')).toContain('a3: not_run throttled');
  });
});

describe('choose, named groups, on_error, mode restart', () => {
  it('choose takes the first branch that holds; named groups of matches are match.NAME', async () => {
    world = await createTestWorld({ users: { alice: {}, shop: {} } });
    await world.addBot(`name: shop
as: shop
rules:
  - id: order
    on: message.received
    if: { content: { matches: "^order (?<item>\\\\w+)" } }
    do:
      - choose:
          - if: { liquid: "match.item == 'tea'" }
            do: [{ reply: "tea is coming" }]
          - if: { content: { matches: "cake" } }
            do: [{ reply: "cake is sold out" }, { log: "cake asked for" }]
          - else:
              - reply: "we have no {{ match.item }}"
`);
    for (const m of ['order tea', 'order cake', 'order soup']) await world.as('alice').send('shop', m);
    await world.settle();
    expect(await replies('alice')).toEqual(['tea is coming', 'cake is sold out', 'we have no soup']);
    const cake = world.traces('shop').find((t) => t.event.summary.includes('order cake'))!;
    expect(cake.steps.map((s) => `${s.action} ${s.status}`)).toEqual(['choose done', 'reply done', 'log done']);
    expect(cake.steps[0]!.result).toMatchObject({ branch: 2, match: { item: 'cake' } });
  });

  it('on_error steps run when a step fails, with the error; the run is still traced as failed', async () => {
    world = await createTestWorld({ users: { alice: {}, desk: {} } });
    await world.addBot(`name: desk
as: desk
rules:
  - id: pay
    on: message.received
    do:
      - send_money: { to: ZZZZZZ, amount: 1 }
    on_error:
      - reply: "sorry, that failed ({{ error.action }}: {{ error.code }})"
`);
    await world.as('alice').send('desk', 'pay please');
    await world.settle();
    expect(await replies('alice')).toEqual(['sorry, that failed (send_money: user_not_found)']);
    expect(world.traces('desk')[0]).toMatchObject({
      outcome: 'failed',
      reason: 'api',
      steps: [
        { action: 'send_money', status: 'failed' },
        { action: 'reply', status: 'done' },
      ],
    });
  });

  it('mode restart: a new event stops the run going (in its wait) and starts over', async () => {
    world = await createTestWorld({ users: { alice: {}, desk: {} } });
    await world.addBot(
      `name: desk\nas: desk\nrules:\n  - id: later\n    mode: restart\n    on: ` +
        `message.received\n    do:\n      - wait: 1m\n      - reply: "done {{ ` +
        `event.content }}"\n`,
    );
    await world.as('alice').send('desk', 'first');
    await world.advance('30s');
    await world.as('alice').send('desk', 'second');
    await world.advance('5m');
    expect(await replies('alice')).toEqual(['done second']);
    expect(outcomes('desk').sort()).toEqual(['first: failed restarted', 'second: done']);
  });
});
