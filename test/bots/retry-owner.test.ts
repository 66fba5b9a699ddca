import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { botWorld, type BotWorld, ECHO_BOT } from '../helpers/bots.js';

let w: BotWorld;
afterEach(() => w?.close());

/** A fetch to the real server whose first `failures` message sends answer 503 without reaching it; counts every try. */
function flakyFetch(failures: number) {
  const hits = { sends: 0, reached: 0 };
  const f: typeof fetch = async (input, init) => {
    const url = String(input);
    if (init?.method === 'POST' && /\/conversations\/[^/]+\/messages$|\/messages\/send$/.test(new URL(url).pathname)) {
      hits.sends++;
      if (hits.sends <= failures) return new Response(JSON.stringify({ error: { code: 'internal_error', message: 'injected' } }), { status: 503, headers: { 'content-type': 'application/json' } });
      hits.reached++;
    }
    return fetch(input, init);
  };
  return { fetch: f, hits };
}

describe('one owner for retries of a request', () => {
  it('a 5xx during a step is retried by the run loop only: one server hit per logged try', async () => {
    const flaky = flakyFetch(3);
    const lines: { msg: string; attempt?: number }[] = [];
    const log = pino({ level: 'debug' }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
    w = await botWorld({
      // the helper's fast client retries (attempts: 2) are asked for: the bot's client must still make none
      host: { log, client: { fetch: flaky.fetch, retry: { attempts: 2, baseMs: 5, capMs: 20 } } },
      bots: { 'echo.yaml': ECHO_BOT },
    });
    await w.host.start();
    await w.host.runner('echo')!.started;
    await w.poll('echo');
    const echo = w.botUser('echo');
    const alice = await w.user('Alice');
    await alice.api.messages.send({ recipient_pin: echo.pin_code, content: 'hi' });
    await w.poll('echo');
    // the run loop's backoff (retryBaseMs 20, doubling) passes on the virtual clock
    for (let i = 0; i < 5; i++) await w.clock.advance(1_000);
    const retries = lines.filter((l) => l.msg === 'reply failed for now; retrying');
    expect(retries.map((l) => l.attempt)).toEqual([1, 2, 3]);
    // every try the run loop made is one request, and no other: 3 failed + 1 that got through
    expect(flaky.hits).toEqual({ sends: 4, reached: 1 });
    const conv = (await alice.api.conversations.list()).conversations.find((c) => c.participants.some((p) => p.id === echo.id))!;
    const got = (await alice.api.conversations.messages(conv.id)).messages.map((m) => m.content);
    expect(got.filter((c) => c.startsWith('echo'))).toEqual(['echo hi']);
    expect(w.host.traces('echo')!.map((t) => t.outcome)).toEqual(['done']);
  }, 30_000);
});
