import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { FIRST_RETRY_MS } from '../../src/runtime/bot/poll-loop.js';
import { botWorld, type BotWorld } from '../helpers/bots.js';

let w: BotWorld;
afterEach(() => w?.close());

const ECHO =
  'name: echo\nas: Echo\ncreate_user: true\nrules:\n  - on: message.received\n    ' +
  'do:\n      - reply: "echo {{ event.content }}"\n';

/**
 * A fetch to the real server whose first `failures` requests matching `hit` answer 503 without
 * reaching it; counts every try. */
function flakyFetch(hit: (method: string, path: string) => boolean) {
  const hits = { tries: 0, reached: 0, failures: 0 };
  const f: typeof fetch = async (input, init) => {
    if (hit(init?.method ?? 'GET', new URL(String(input)).pathname)) {
      hits.tries++;
      if (hits.tries <= hits.failures)
        return new Response(JSON.stringify({ error: { code: 'internal_error', message: 'injected' } }), {
          status: 503,
          headers: { 'content-type': 'application/json' },
        });
      hits.reached++;
    }
    return fetch(input, init);
  };
  return { fetch: f, hits };
}

/** A logger whose lines the test reads. */
function logLines() {
  const lines: Array<{ msg: string; attempt?: number; source?: string }> = [];
  const log = pino(
    { level: 'debug' },
    new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }),
  );
  return { lines, log };
}

describe('one owner for the retries of a bot request', () => {
  it('a 5xx during a step is retried by the run loop only: one server hit per logged try', async () => {
    const flaky = flakyFetch((m, p) => m === 'POST' && /\/conversations\/[^/]+\/messages$|\/messages\/send$/.test(p));
    const { lines, log } = logLines();
    w = await botWorld({
      // the helper's fast client retries (attempts: 2) are asked for: the bot's client must still make none
      host: { log, client: { fetch: flaky.fetch, retry: { attempts: 2, baseMs: 5, capMs: 20 } } },
      bots: { 'echo.yaml': ECHO },
    });
    await w.host.start();
    await w.host.runner('echo')!.started;
    await w.poll('echo');
    const echo = w.botUser('echo');
    const alice = await w.user('Alice');
    flaky.hits.failures = 3;
    await alice.api.messages.send({ recipient_pin: echo.pin_code, content: 'hi' });
    await w.poll('echo');
    // the run loop's backoff (retryBaseMs 20, doubling) passes on the virtual clock
    for (let i = 0; i < 5; i++) await w.clock.advance(1_000);
    const retries = lines.filter((l) => l.msg === 'reply failed for now; retrying');
    expect(retries.map((l) => l.attempt)).toEqual([1, 2, 3]);
    // every try the run loop made is one request, and no other: 3 failed + 1 that got through
    expect(flaky.hits).toMatchObject({ tries: 4, reached: 1 });
    const conv = (await alice.api.conversations.list()).conversations.find((c) =>
      c.participants.some((p) => p.id === echo.id),
    )!;
    const got = (await alice.api.conversations.messages(conv.id)).messages.map((m) => m.content);
    expect(got.filter((c) => c.startsWith('echo'))).toEqual(['echo hi']);
    expect(w.host.traces('echo')!.map((t) => t.outcome)).toEqual(['done']);
  }, 30_000);

  it('a failed poll is tried again by the poll loop after FIRST_RETRY_MS, then ×4, one request per try', async () => {
    const flaky = flakyFetch((m, p) => m === 'GET' && p === '/api/v1/messages');
    const { lines, log } = logLines();
    w = await botWorld({
      host: { log, client: { fetch: flaky.fetch, retry: { attempts: 2, baseMs: 5, capMs: 20 } } },
      bots: { 'echo.yaml': ECHO },
    });
    await w.host.start();
    await w.host.runner('echo')!.started;
    await w.poll('echo');
    const echo = w.botUser('echo');
    const alice = await w.user('Alice');
    const before = flaky.hits.tries;
    flaky.hits.failures = before + 2;
    await alice.api.messages.send({ recipient_pin: echo.pin_code, content: 'hi' });
    await w.clock.advance(0);
    expect(flaky.hits.tries).toBe(before + 1);
    expect(lines.filter((l) => l.msg === 'polling messages failed; backing off')).toHaveLength(1);
    // not before the short first retry …
    await w.clock.advance(FIRST_RETRY_MS - 1);
    expect(flaky.hits.tries).toBe(before + 1);
    await w.clock.advance(1);
    expect(flaky.hits.tries).toBe(before + 2);
    // … which fails too: the next wait is four times as long (not twice the 10-minute safety poll)
    await w.clock.advance(4 * FIRST_RETRY_MS - 1);
    expect(flaky.hits.tries).toBe(before + 2);
    await w.clock.advance(1);
    expect(flaky.hits.tries).toBe(before + 3);
    await w.host.runner('echo')!.idle();
    const conv = (await alice.api.conversations.list()).conversations[0]!;
    const got = (await alice.api.conversations.messages(conv.id)).messages.map((m) => m.content);
    expect(got).toEqual(['hi', 'echo hi']);
  }, 30_000);
});
