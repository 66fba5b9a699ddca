import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { configFrom } from '../../src/config/load.js';
import { consoleService } from '../../src/console/service.js';
import { writeScenarioYaml } from '../../src/console/recorder.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { tempDir } from '../helpers/api.js';
import { hostFetch } from '../helpers/host-fetch.js';

const ROOT = join(import.meta.dirname, '../..');
let server: RunningServer | undefined;
let tmp: { dir: string; cleanup: () => void } | undefined;
afterEach(async () => {
  await server?.close();
  tmp?.cleanup();
  server = tmp = undefined;
});

async function serve(
  host: string,
  console: Record<string, unknown> = {},
  linkClock?: VirtualClock,
): Promise<RunningServer> {
  tmp = tempDir('pinbot-console-');
  server = await startServer({
    dataDir: join(tmp.dir, 'data'),
    config: configFrom({ console }),
    host,
    port: 0,
    virtualClock: Date.parse('2026-11-21T12:00:00Z'),
    log: pino({ level: 'silent' }),
    services: [consoleService({ linkClock })],
  });
  return server;
}

/** A request to 127.0.0.1 (named so in its Host header). */
const local = (s: RunningServer, path: string, init?: Parameters<typeof hostFetch>[1]) =>
  hostFetch(`http://127.0.0.1:${s.port}${path}`, init);
/** A request to the host a link names (the console's own name on loopback), as a browser sends it. */
const to = (link: string, path: string, init?: Parameters<typeof hostFetch>[1]) =>
  hostFetch(`${new URL(link).origin}${path}`, init);
const signInPath = (link: string) => new URL(link).pathname + new URL(link).search;

describe('console access', () => {
  it('is on by default on a loopback address: a link signs in once, and the session reads pages', async () => {
    const s = await serve('127.0.0.1');
    const { url } = (await s.command!('console.link')) as { url: string };
    expect(url).toMatch(new RegExp(`^http://c-[a-z2-7]{26}\\.localhost:${s.port}/console/signin\\?token=[\\w-]{43}$`));
    const first = await to(url, signInPath(url));
    expect(first.status).toBe(303);
    const cookie = first.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^pinbot_console=[\w-]+; Path=\/console; HttpOnly; SameSite=Strict$/);
    const page = await to(url, '/console/users', { headers: { cookie: cookie.split(';')[0]! } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(/^default-src 'self'; script-src 'self';/);
    expect((await to(url, signInPath(url))).status).toBe(403);
    expect((await to(url, '/console/users')).status).toBe(401);
    // another site's name resolved to 127.0.0.1 (DNS rebinding) is not served
    const rebound = await new Promise<number>((done, fail) =>
      request(
        {
          host: '127.0.0.1',
          port: s.port,
          path: '/console/users',
          headers: { cookie: cookie.split(';')[0]!, host: `evil.example:${s.port}` },
        },
        (r) => (r.resume(), done(r.statusCode!)),
      )
        .on('error', fail)
        .end(),
    );
    expect(rebound).toBe(421);
  });

  it('is off on another address unless console.enabled is true; false turns it off everywhere', async () => {
    let s = await serve('0.0.0.0');
    await expect(s.command!('console.link')).rejects.toThrow(
      'the web console is off: the server listens on 0.0.0.0, not on a loopback ' +
        'address; set console.enabled: true in config.yaml',
    );
    expect((await local(s, '/console/bots')).status).toBe(404);
    await s.close();
    tmp!.cleanup();
    s = await serve('0.0.0.0', { enabled: true });
    expect(((await s.command!('console.link')) as { url: string }).url).toContain('/console/signin?token=');
    await s.close();
    tmp!.cleanup();
    s = await serve('127.0.0.1', { enabled: false });
    await expect(s.command!('console.link')).rejects.toThrow('console.enabled is false');
  });

  it('`pinbot console` prints a one-time link through the admin socket', async () => {
    const s = await serve('127.0.0.1');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'bin/pinbot.js'), 'console', '--data', join(tmp!.dir, 'data'), '--json'],
      { cwd: tmp!.dir },
    );
    const { url } = JSON.parse(stdout) as { url: string };
    const res = await to(url, signInPath(url));
    expect(res.status).toBe(303);
  });

  it('the live feed is server-sent events, one when a transaction commits', async () => {
    const s = await serve('127.0.0.1');
    const { url } = (await s.command!('console.link')) as { url: string };
    const cookie = (await to(url, signInPath(url))).headers.get('set-cookie')!.split(';')[0]!;
    const res = await to(url, '/console/events', { headers: { cookie } });
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe(
      'retry: 2000\nevent: hello\ndata: {"seq":0}\n\n',
    );
    await s.command!('users.add', { name: 'Dana' });
    expect(new TextDecoder().decode((await reader.read()).value)).toBe(
      'event: change\ndata: {"seq":1,"topics":["commit"]}\n\n',
    );
    await reader.cancel();
  });
});

describe('a session cookie that leaks to another port (round 4)', () => {
  const FORM = 'application/x-www-form-urlencoded';
  async function signedIn(s: RunningServer) {
    const { url } = (await s.command!('console.link')) as { url: string };
    const cookie = (await to(url, signInPath(url))).headers.get('set-cookie')!.split(';')[0]!;
    const csrf = /name="csrf-token" content="([^"]+)"/.exec(
      await (await to(url, '/console/users', { headers: { cookie } })).text(),
    )![1]!;
    return { url, cookie, csrf };
  }

  it(
    'replayed at 127.0.0.1 or localhost (where a cookie of 127.0.0.1 would go to every ' +
      'port) reads nothing and creates no one',
    async () => {
      const s = await serve('127.0.0.1');
      const { url, cookie, csrf } = await signedIn(s);
      expect(new URL(url).hostname).toMatch(/^c-[a-z2-7]{26}\.localhost$/);
      const before = ((await s.command!('users.list')) as { users: unknown[] }).users.length;
      for (const host of [`127.0.0.1:${s.port}`, `localhost:${s.port}`, `[::1]:${s.port}`]) {
        const read = await local(s, '/console/users', { headers: { cookie, host } });
        expect([host, read.status]).toEqual([host, 401]);
        expect(await read.text()).not.toContain(csrf);
        const made = await local(s, '/console/users', {
          method: 'POST',
          headers: { cookie, host, 'content-type': FORM, 'x-csrf-token': csrf },
          body: new URLSearchParams({ name: 'Mallory', balance: '1000', _csrf: csrf }).toString(),
        });
        expect([host, made.status]).toEqual([host, 401]);
      }
      expect(((await s.command!('users.list')) as { users: unknown[] }).users).toHaveLength(before);
      // the 401 page does not tell the console's host name
      expect(await (await local(s, '/console/users')).text()).not.toContain(new URL(url).hostname);
      // at its own name the same cookie works
      expect((await to(url, '/console/users', { headers: { cookie } })).status).toBe(200);
    },
  );

  it('a sign-in link opened at 127.0.0.1 is refused and not used up; at its own name it signs in', async () => {
    const s = await serve('127.0.0.1');
    const { url } = (await s.command!('console.link')) as { url: string };
    const wrong = await local(s, signInPath(url));
    expect(wrong.status).toBe(403);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    expect(await wrong.text()).toContain('Open the sign-in link exactly as it was printed');
    expect((await to(url, signInPath(url))).status).toBe(303);
  });

  it('a session unused for console.session_idle ends; using it keeps it (on the injected clock)', async () => {
    const clock = new VirtualClock(Date.parse('2026-11-21T12:00:00Z'));
    const s = await serve('127.0.0.1', { session_idle: '30m' }, clock);
    const { url, cookie } = await signedIn(s);
    await clock.advance(29 * 60_000);
    expect((await to(url, '/console/bots', { headers: { cookie } })).status).toBe(200);
    await clock.advance(29 * 60_000);
    expect((await to(url, '/console/bots', { headers: { cookie } })).status).toBe(200);
    // a live page refreshing itself is not the operator using it
    await clock.advance(29 * 60_000);
    expect((await to(url, '/console/bots', { headers: { cookie, 'x-console-live': '1' } })).status).toBe(200);
    await clock.advance(60_001);
    expect((await to(url, '/console/bots', { headers: { cookie } })).status).toBe(401);
    expect((await to(url, '/console/bots', { headers: { cookie } })).status).toBe(401);
  });

  it(
    'a keyless flood from a local process does not keep the operator’s sign-in link at ' +
      '429 (a valid token is not anonymous)',
    async () => {
      const s = await serve('127.0.0.1');
      const { url } = (await s.command!('console.link')) as { url: string };
      const limit = configFrom({}).rate_limits.anonymous.limit;
      for (let i = 0; i <= limit; i++) await local(s, '/console/bots');
      expect((await local(s, '/console/bots')).status).toBe(429);
      expect((await to(url, `/console/signin?token=${'A'.repeat(43)}`)).status).toBe(429);
      expect((await to(url, signInPath(url))).status).toBe(303);
    },
  );
});

describe('the recorder', () => {
  it('turns ids of earlier answers into captures and PINs into user references, and expects only stable fields', () => {
    const alice = { id: 'usr_aaaaaaaaaaaa', display_name: 'Alice', pin_code: 'AAAAAA' };
    const bob = { id: 'usr_bbbbbbbbbbbb', display_name: 'Bob Smith', pin_code: 'BBBBBB' };
    const tx = {
      id: 'txn_1m7ze2k2j0000785p740u',
      type: 'transfer',
      amount: 5,
      status: 'pending',
      sender: alice,
      created_at: '2026-11-21T12:00:00.000Z',
    };
    const yaml = writeScenarioYaml({
      name: 'r',
      startIso: '2026-11-21T12:00:00.000Z',
      userByPin: (pin) => (pin === bob.pin_code ? bob : undefined),
      steps: [
        {
          kind: 'request',
          balanceBefore: 20,
          req: {
            user: alice,
            method: 'POST',
            path: '/wallet/send',
            body: { recipient_pin: 'BBBBBB', amount: 5 },
            status: 201,
            answer: { transaction: tx },
          },
        },
        { kind: 'clock', advanceMs: 86_400_000 },
        {
          kind: 'request',
          req: {
            user: bob,
            method: 'POST',
            path: `/wallet/transactions/${tx.id}/accept`,
            status: 409,
            answer: { error: { code: 'transaction_not_pending', message: 'x' } },
          },
        },
      ],
    });
    expect(yaml).toBe(`# yaml-language-server: $schema=../schemas/scenario.schema.json
name: r
description: Recorded in the pinbot console.
clock:
  start: 2026-11-21T12:00:00.000Z
users:
  Alice:
    balance: 20
  bob_smith: {}
steps:
  - as: Alice
    request: POST /wallet/send
    body:
      recipient_pin: "{{ users.bob_smith.pin_code }}"
      amount: 5
    expect:
      status: 201
      body:
        transaction:
          type: transfer
          amount: 5
          status: pending
    save:
      tx1: transaction.id
  - clock:
      advance: 1d
  - as: bob_smith
    request: POST /wallet/transactions/{{ tx1 }}/accept
    expect:
      status: 409
      body:
        error:
          code: transaction_not_pending
`);
  });
});
