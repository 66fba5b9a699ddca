import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestWorld, type TestWorld } from '../../src/testing/world.js';

/**
 * On the embedded server a bot polls when something that concerns its user changed — through
 * the same client and sources as a remote bot, only sooner — and makes no request otherwise.
 */

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const echo = (name: string, poll = '1h') =>
  `name: ${name}\nas: ${name}\npoll: ${poll}\nrules:\n  - on: message.received\n    ` +
  `do: [{ reply: "${name} got {{ event.content }}" }]\n  - on: transfer.received\n    ` +
  `do: [{ reply: "${name} got {{ event.amount }}" }]\n`;

/** Counts the HTTP requests made with a bot's key. */
function requestsOf(w: TestWorld, bot: string): { count: number } {
  const { api_key } = JSON.parse(readFileSync(join(w.server.dataDir, 'bots', 'keys', `${bot}.json`), 'utf8')) as {
    api_key: string;
  };
  const seen = { count: 0 };
  w.server.http.on('request', (req) => {
    if (req.headers['x-api-key'] === api_key) seen.count++;
  });
  return seen;
}

describe('wake on change (embedded server)', () => {
  it('a bot polls as soon as a change concerns it, whatever its poll interval', async () => {
    world = await createTestWorld({ users: { alice: { balance: 5 }, desk: {} } });
    await world.addBot(echo('desk'));
    await world.as('alice').send('desk', 'hi');
    await world.settle(); // no time passes
    expect((await world.inbox('alice')).map((m) => m.content)).toEqual(['desk got hi']);
    await world.as('alice').pay('desk', 2);
    await world.settle();
    expect((await world.inbox('alice')).map((m) => m.content)).toEqual(['desk got hi', 'desk got 2']);
  });

  it('no change that concerns a bot, no request: a busy neighbour does not make it poll', async () => {
    world = await createTestWorld({ users: { alice: {}, busy: {}, idle: {} } });
    await world.addBot(echo('busy', '5s'));
    await world.addBot(echo('idle', '5s'));
    const idle = requestsOf(world, 'idle');
    const busy = requestsOf(world, 'busy');
    for (let i = 0; i < 20; i++) {
      await world.as('alice').send('busy', `m${i}`);
      await world.advance('15s');
    }
    expect((await world.inbox('alice')).filter((m) => m.content.startsWith('busy got'))).toHaveLength(20);
    // 5 minutes of traffic for its neighbour: the idle bot made no request (its safety poll is every 10 minutes)
    expect(idle.count).toBe(0);
    // the busy bot, for each message: a poll when woken (the list, then the conversation) and
    // its reply; its own reply wakes nothing
    expect(busy.count).toBeLessThanOrEqual(20 * 3);
  });
});
