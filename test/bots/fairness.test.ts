import { afterEach, describe, expect, it } from 'vitest';
import { createTestWorld, type TestWorld } from '../../src/testing/world.js';

/** One busy sender must not make everyone else wait. */

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const slowDesk = (extra = '') => `name: desk
as: desk
poll: 1h
${extra}rules:
  - id: answer
    on: message.received
    do:
      - wait: 1m
      - reply: "{{ event.content }} done"
`;

describe('fairness', () => {
  it('runs of a queued rule are taken round robin by sender', async () => {
    world = await createTestWorld({ users: { alice: {}, bob: {}, desk: {} } });
    await world.addBot(slowDesk());
    for (let i = 1; i <= 4; i++) await world.as('alice').send('desk', `a${i}`);
    await world.as('bob').send('desk', 'b1');
    await world.host.runner('desk')!.pollNow();
    await world.advance('6m');
    const done = world.traces('desk').map((t) => t.event.summary.match(/"(.*)"/)![1]);
    expect(done).toEqual(['a1', 'b1', 'a2', 'a3', 'a4']);
  });

  it('per_sender.max_queued bounds what one sender may have waiting; the rest is traced sender_backlog', async () => {
    world = await createTestWorld({ users: { alice: {}, bob: {}, desk: {} } });
    await world.addBot(slowDesk('per_sender: { max_queued: 2 }\n'));
    for (let i = 1; i <= 5; i++) await world.as('alice').send('desk', `a${i}`);
    await world.as('bob').send('desk', 'b1');
    await world.host.runner('desk')!.pollNow();
    await world.advance('10m');
    const outcome = world.traces('desk').map((t) => `${t.event.summary.match(/"(.*)"/)![1]} ${t.reason ?? t.outcome}`);
    // a1 runs at once, a2 and a3 wait; a4 and a5 are refused; bob is not held up by any of it
    expect(outcome.sort()).toEqual([
      'a1 done',
      'a2 done',
      'a3 done',
      'a4 sender_backlog',
      'a5 sender_backlog',
      'b1 done',
    ]);
    expect(world.traces('desk').find((t) => t.reason === 'sender_backlog')!.message).toMatch(
      /already has 2 events waiting for this rule \(per_sender\.max_queued\)/,
    );
  });

  it('three users flooding the FAQ bot at their message limit: a fourth is answered ' +
    'within two poll intervals', async () => {
    world = await createTestWorld({
      // spec rate limits for everyone; the bot's user has limits of its own (rate_limits.users)
      config: { rate_limits: { enabled: true, users: { faq: { general: 1000, messages: 300 } } } },
      users: { u1: {}, u2: {}, u3: {}, dora: {}, faq: {} },
    });
    // loop_guard off: a person at 30 messages a minute would otherwise be paused as a bot would
    await world.addBot(
      `name: faq\nas: faq\nloop_guard: false\nrules:\n  - id: answer\n    on: ` +
        `message.received\n    do: [{ reply: "answer to {{ event.content }}" }]\n`,
    );
    let asked = 0;
    for (let s = 0; s < 60; s += 2) {
      // each flooder sends at its limit: 30 messages a minute
      for (const u of ['u1', 'u2', 'u3']) await world.as(u).send('faq', `${u} #${s}`);
      if (s === 30) asked = (await world.as('dora').send('faq', 'opening hours?')).timestamp;
      await world.advance('2s');
    }
    const reply = (await world.inbox('dora')).find((m) => m.content === 'answer to opening hours?');
    expect(reply).toBeDefined();
    expect(reply!.timestamp - asked).toBeLessThanOrEqual(10_000); // two poll intervals of 5 s
    // and no flooder's answer was lost either
    expect((await world.inbox('u1')).filter((m) => m.content.startsWith('answer to'))).toHaveLength(30);
  }, 60_000);
});
