import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { configFrom } from '../../src/config/load.js';
import { consoleService } from '../../src/console/service.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { tempDir } from '../helpers/api.js';
import { hostFetch } from '../helpers/host-fetch.js';

// Issue 30 item 9: a live page for a user read 6–7 API requests as that user on every commit of
// anyone, so other users' traffic spent the user's rate limit (its bot got 429s).

let server: RunningServer | undefined;
let tmp: { dir: string; cleanup: () => void } | undefined;
afterEach(async () => {
  await server?.close();
  tmp?.cleanup();
  server = tmp = undefined;
});

type Made = { id: string; pin_code: string; api_key: string };

async function setUp() {
  tmp = tempDir('pinbot-console-live-');
  const liveClock = new VirtualClock(Date.parse('2026-11-21T12:00:00Z'));
  server = await startServer({
    dataDir: join(tmp.dir, 'data'),
    config: configFrom({}),
    host: '127.0.0.1',
    port: 0,
    virtualClock: Date.parse('2026-11-21T12:00:00Z'),
    log: pino({ level: 'silent' }),
    services: [consoleService({ liveClock })],
  });
  const s = server;
  const { url } = (await s.command!('console.link')) as { url: string };
  const origin = new URL(url).origin;
  const cookie = (await hostFetch(`${origin}${new URL(url).pathname}${new URL(url).search}`)).headers
    .get('set-cookie')!
    .split(';')[0]!;
  const add = async (name: string, balance?: string) =>
    (await s.command!('users.add', { name, ...(balance ? { balance } : {}) })) as Made;
  const api = (who: Made, method: string, path: string, body?: unknown) =>
    fetch(`http://127.0.0.1:${s.port}/api/v1${path}`, {
      method,
      headers: { 'X-API-Key': who.api_key, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const page = (path: string, headers: Record<string, string> = {}) =>
    hostFetch(`${origin}${path}`, { headers: { cookie, ...headers } });
  return { s, liveClock, add, api, page };
}

/** The change events of a live stream, as they come. */
function changes(res: Response) {
  const reader = res.body!.getReader();
  let text = '';
  return async (): Promise<{ seq: number; topics: string[] }> => {
    for (;;) {
      const m = /event: change\ndata: (.*)\n\n/.exec(text);
      if (m) {
        text = text.slice(m.index + m[0].length);
        return JSON.parse(m[1]!) as { seq: number; topics: string[] };
      }
      const { value, done } = await reader.read();
      if (done) throw new Error('the stream ended');
      text += new TextDecoder().decode(value);
    }
  };
}
const seqOf = async (r: Response) => Number(/name="live-seq" content="(\d+)"/.exec(await r.text())![1]);
const remaining = (r: Response) => Number(/"general"; r=(\d+)/.exec(r.headers.get('ratelimit') ?? '')?.[1]);

describe('a live page for a user (round 4)', () => {
  it(
    'spends none of the user’s rate limit: 20 renders of its page, and its own next ' +
      'request still has 99 of 100 left',
    async () => {
      const { add, api, page } = await setUp();
      const jar = await add('Tip Jar');
      const bob = await add('Bob', '20');
      await api(bob, 'POST', '/messages/send', { recipient_pin: jar.pin_code, content: 'hello jar' });
      for (let i = 0; i < 20; i++) {
        const r = await page(`/console/users/${jar.id}`, { 'x-console-live': '1' });
        expect(r.status).toBe(200);
        expect(await r.text()).toContain('hello jar');
      }
      const own = await api(jar, 'GET', '/me');
      expect(own.status).toBe(200);
      expect(remaining(own)).toBe(99);
    },
  );

  it(
    'other users’ traffic does not refresh it; a change of its user does; a flood ' +
      'reaches any page at most once a second',
    async () => {
      const { add, api, page, liveClock } = await setUp();
      const jar = await add('Tip Jar');
      const bob = await add('Bob', '20');
      const mallory = await add('Mallory');
      const jarPage = changes(await page(`/console/events?user=${jar.id}`));
      const botsPage = changes(await page('/console/events'));
      // Mallory's 20 messages to Bob, each its own commit
      for (let i = 0; i < 20; i++)
        expect(
          (await api(mallory, 'POST', '/messages/send', { recipient_pin: bob.pin_code, content: `spam ${i}` })).status,
        ).toBe(201);
      const afterFlood = await seqOf(await page('/console/bots'));
      expect(afterFlood).toBeGreaterThanOrEqual(20);
      // the bots page: the first change at once, the other 19 held until a second has passed, then one event
      expect((await botsPage()).seq).toBeLessThan(afterFlood);
      await liveClock.advance(1000);
      expect(await botsPage()).toEqual({ seq: afterFlood, topics: ['commit'] });
      // the jar's page heard nothing of it: its first event is Bob's tip to the jar
      expect((await api(bob, 'POST', '/wallet/send', { recipient_pin: jar.pin_code, amount: 5 })).status).toBe(201);
      const tipped = await seqOf(await page('/console/bots'));
      expect(await jarPage()).toEqual({ seq: tipped, topics: ['commit'] });
      // and the page it then fetches costs the jar nothing
      const view = await page(`/console/users/${jar.id}`, { 'x-console-live': '1' });
      expect(await view.text()).toContain('5 from Bob');
      expect(remaining(await api(jar, 'GET', '/me'))).toBe(99);
    },
  );
});
