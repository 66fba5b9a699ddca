import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/client.js';
import { createKey } from '../../src/domain/users/keys.js';
import { botWorld, type BotWorld, ECHO_BOT } from '../helpers/bots.js';

let w: BotWorld;
afterEach(() => w?.close());

describe('429 from a server with tiny limits', () => {
  it('the bot waits Retry-After and then replies, exactly once each', async () => {
    const retries: string[] = [];
    w = await botWorld({
      config: {
        rate_limits: { enabled: true, general: { limit: 1000, window: '1m' }, messages: { limit: 2, window: '2s' } },
      },
      host: { client: { retry: { attempts: 2, baseMs: 5, capMs: 20 }, onRetry: (i) => retries.push(i.reason) } },
      bots: { 'echo.yaml': ECHO_BOT },
    });
    await w.host.start();
    await w.host.runner('echo')!.started;
    await w.poll('echo');
    const echo = w.botUser('echo');
    const alice = await w.user('Alice');
    const bob = await w.user('Bob');
    // someone else holding a key of the bot's user spends its messages budget first
    const other = await w.server.store.transaction((tx) => createKey(tx, w.server.env, echo.id));
    const otherApi = createClient({ baseUrl: w.server.url, apiKey: other.api_key });
    await alice.api.messages.send({ recipient_pin: echo.pin_code, content: 'a' });
    await alice.api.messages.send({ recipient_pin: echo.pin_code, content: 'b' });
    await otherApi.messages.send({ recipient_pin: bob.user.pin_code, content: '1' });
    await otherApi.messages.send({ recipient_pin: bob.user.pin_code, content: '2' });
    await w.poll('echo');
    expect(retries).toContain('429 rate_limited');
    // the bot waits Retry-After on the clock: the messages window (2 s) passes on the virtual clock
    await w.clock.advance(3_000);
    const conv = (await alice.api.conversations.list()).conversations.find((c) =>
      c.participants.some((p) => p.id === echo.id),
    )!;
    const got = (await alice.api.conversations.messages(conv.id)).messages.map((m) => m.content);
    expect(got.filter((c) => c.startsWith('echo')).sort()).toEqual(['echo a', 'echo b']);
    const traces = w.host.traces('echo')!;
    expect(traces.map((t) => t.outcome)).toEqual(['done', 'done']);
  }, 30_000);
});
