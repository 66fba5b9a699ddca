import { afterEach, describe, expect, it } from 'vitest';
import { createTestWorld, type TestWorld } from '../../src/testing/world.js';

/** Two bots that answer every message must not talk to each other for ever. */

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const echo = (name: string, extra = '') =>
  `name: ${name}\nas: ${name}\n${extra}rules:\n  - id: answer\n    on: ` +
  `message.received\n    do: [{ reply: "${name}!" }]\n`;

async function conversation(a: string, b: string): Promise<string[]> {
  const { conversations } = await world!.users[a]!.api.conversations.list();
  const c = conversations.find((x) => x.participants.some((p) => p.id === world!.users[b]!.id))!;
  return (await world!.users[a]!.api.conversations.messages(c.id, { limit: 200 })).messages.map((m) => m.content);
}

const faq =
  `name: faq\nas: faq\nrules:\n  - id: hours\n    on: message.received\n    if: { ` +
  `content: { matches: "hours", flags: i } }\n    do: [{ reply: "answer to {{ ` +
  `event.content }}: 9 to 5" }]\n`;

/** The questions the FAQ bot answered in a conversation. */
async function answersIn(conversationId: string): Promise<string[]> {
  const { messages } = await world!.users.faq!.api.conversations.messages(conversationId, { limit: 200 });
  return messages
    .filter((m) => m.sender.id === world!.users.faq!.id)
    .map((m) => m.content.replace(/^answer to (.*): 9 to 5$/, '$1'));
}

describe('loops between bots', () => {
  it(
    'two echo bots in one conversation stop within 20 messages; the one that stopped ' + 'traced loop_suspected',
    async () => {
      world = await createTestWorld({ users: { ping: {}, pong: {} } });
      await world.addBot(echo('ping'));
      await world.addBot(echo('pong'));
      await world.as('ping').send('pong', 'hello');
      await world.advance('3m');
      const talk = await conversation('ping', 'pong');
      // each bot answers the first message and 5 machine-speed replies; the next pauses the exchange
      expect(talk.length).toBeGreaterThanOrEqual(12);
      expect(talk.length).toBeLessThanOrEqual(20);
      // the bot that got the last word traced it instead of answering
      const stopped = [...world.traces('ping'), ...world.traces('pong')].filter((t) => t.reason === 'loop_suspected');
      expect(stopped).toHaveLength(1);
      expect(stopped[0]!.message).toMatch(/6 replies in a row came within 60 s of the bot's answers .*paused until/);
      await world.advance('5m');
      expect(await conversation('ping', 'pong')).toHaveLength(talk.length);
    },
  );

  it('two bots it does not know as bots (another server) stop too: their replies come at machine speed', async () => {
    world = await createTestWorld({ users: { ping: {}, human: {} } });
    await world.addBot(echo('ping'));
    // "human" is driven by this test like a bot on another server would be: it answers each answer at once
    await world.as('human').send('ping', 'hello');
    for (let i = 0; i < 15; i++) {
      await world.settle();
      await world.as('human').send('ping', `again ${i}`);
    }
    await world.settle();
    const answers = (await conversation('human', 'ping')).filter((m) => m === 'ping!');
    expect(answers).toHaveLength(6);
    expect(world.traces('ping').filter((t) => t.reason === 'loop_suspected')[0]!.message).toMatch(
      /6 replies in a row came within 2 s/,
    );
  });

  it('a person sending 30 messages over 3 minutes to an echo bot gets 30 answers', async () => {
    world = await createTestWorld({ users: { alice: {}, echo: {} } });
    await world.addBot(echo('echo'));
    for (let i = 0; i < 30; i++) {
      await world.as('alice').send('echo', `message ${i}`);
      await world.advance('6s');
    }
    expect((await conversation('alice', 'echo')).filter((m) => m === 'echo!')).toHaveLength(30);
    expect(world.traces('echo').filter((t) => t.reason === 'loop_suspected')).toEqual([]);
  });

  it('10 people asking a FAQ bot in one group within a minute all get answers', async () => {
    const people = Array.from({ length: 10 }, (_, i) => `p${i}`);
    world = await createTestWorld({ users: Object.fromEntries([...people, 'faq'].map((u) => [u, {}])) });
    await world.addBot(faq);
    const group = await world.users.p0!.api.conversations.create({
      name: 'help',
      participant_pins: [...people.slice(1), 'faq'].map((u) => world!.users[u]!.pin_code),
    });
    for (const p of people) {
      await world.users[p]!.api.conversations.send(group.id, { content: `${p}: what are your hours?` });
      await world.advance('5s');
    }
    expect(await answersIn(group.id)).toHaveLength(10);
  });

  it('one member flooding a group cannot stop the bot answering the others', async () => {
    world = await createTestWorld({ users: { mallory: {}, alice: {}, bob: {}, faq: {} } });
    await world.addBot(faq);
    const group = await world.users.mallory!.api.conversations.create({
      name: 'help',
      participant_pins: ['alice', 'bob', 'faq'].map((u) => world!.users[u]!.pin_code),
    });
    // at the server's limit for one user: 30 messages a minute
    for (let i = 0; i < 29; i++) {
      await world.users.mallory!.api.conversations.send(group.id, { content: `hours? ${i}` });
      await world.advance('1s');
      if (i === 10) await world.users.alice!.api.conversations.send(group.id, { content: 'alice: hours?' });
      if (i === 20) await world.users.bob!.api.conversations.send(group.id, { content: 'bob: hours?' });
    }
    await world.advance('1m');
    const answered = await answersIn(group.id);
    // mallory's own exchange was paused after 5 machine-speed replies; alice and bob are other exchanges
    expect(answered.filter((t) => t.startsWith('alice'))).toHaveLength(1);
    expect(answered.filter((t) => t.startsWith('bob'))).toHaveLength(1);
    expect(answered.filter((t) => t.startsWith('hours?')).length).toBe(6);
    expect(world.traces('faq').find((t) => t.reason === 'loop_suspected')!.message).toMatch(
      /with [A-Z0-9]{6}: 6 replies in a row/,
    );
  });

  it('ignore_bots: events caused by users that bots act as are not answered (traced from_bot)', async () => {
    world = await createTestWorld({ users: { ping: {}, pong: {}, alice: {} } });
    await world.addBot(echo('ping', 'ignore_bots: true\n'));
    await world.addBot(echo('pong'));
    await world.as('pong').send('ping', 'hello from a bot');
    await world.as('alice').send('ping', 'hello from a person');
    await world.advance('1m');
    expect(await conversation('alice', 'ping')).toEqual(['hello from a person', 'ping!']);
    expect(await conversation('pong', 'ping')).toEqual(['hello from a bot']);
    expect(
      world
        .traces('ping')
        .map((t) => t.reason ?? t.outcome)
        .sort(),
    ).toEqual(['done', 'from_bot']);
  });
});
