import { afterEach, describe, expect, it } from 'vitest';
import { createTestWorld, type TestWorld } from '../../src/testing/world.js';

/** Two bots that answer every message must not talk to each other for ever. */

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const echo = (name: string, extra = '') => `name: ${name}\nas: ${name}\n${extra}rules:\n  - id: answer\n    on: message.received\n    do: [{ reply: "${name}!" }]\n`;

async function conversation(a: string, b: string): Promise<string[]> {
  const { conversations } = await world!.users[a]!.api.conversations.list();
  const c = conversations.find((x) => x.participants.some((p) => p.id === world!.users[b]!.id))!;
  return (await world!.users[a]!.api.conversations.messages(c.id, { limit: 200 })).messages.map((m) => m.content);
}

describe('loops between bots', () => {
  it('the loop guard pauses a conversation where the bot keeps answering another bot, and traces loop_suspected', async () => {
    world = await createTestWorld({ users: { ping: {}, pong: {} } });
    await world.addBot(echo('ping'));
    await world.addBot(echo('pong'));
    await world.as('ping').send('pong', 'hello');
    await world.advance('3m');
    const talk = await conversation('ping', 'pong');
    // 10 answers each within a minute, then each bot pauses the conversation (10 minutes)
    expect(talk.length).toBeGreaterThanOrEqual(20);
    expect(talk.length).toBeLessThanOrEqual(22);
    // the bot that got the last word traced it instead of answering
    const stopped = [...world.traces('ping'), ...world.traces('pong')].filter((t) => t.reason === 'loop_suspected');
    expect(stopped).toHaveLength(1);
    expect(stopped[0]!.message).toMatch(/paused until/);
    await world.advance('5m');
    expect(await conversation('ping', 'pong')).toHaveLength(talk.length);
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
    expect(world.traces('ping').map((t) => t.reason ?? t.outcome).sort()).toEqual(['done', 'from_bot']);
  });
});
