import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { parse } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { configFrom } from '../../src/config/load.js';
import { writeScenarioYaml } from '../../src/console/recorder.js';
import { consoleService } from '../../src/console/service.js';
import { loadAll } from '../../src/scenario/run-all.js';
import { runScenario } from '../../src/scenario/runner.js';
import { scenarioPort } from '../../src/scenario/console-port.js';
import { render } from '../../src/scenario/templates.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { tempDir } from '../helpers/api.js';
import { hostFetch } from '../helpers/host-fetch.js';

// A hostile caller against a real console over real HTTP (issue 23 review).
let server: RunningServer | undefined;
let tmp: { dir: string; cleanup: () => void } | undefined;
let logged: string[] = [];
afterEach(async () => {
  await server?.close();
  tmp?.cleanup();
  server = tmp = undefined;
  logged = [];
});

async function serve(): Promise<RunningServer> {
  tmp = tempDir('pinbot-console-attack-');
  const log = pino({ level: 'warn' }, { write: (line: string) => void logged.push(line) });
  server = await startServer({
    dataDir: join(tmp.dir, 'data'),
    config: configFrom({ rate_limits: { anonymous: { limit: 100_000 } } }),
    host: '127.0.0.1',
    port: 0,
    virtualClock: Date.parse('2026-11-21T12:00:00Z'),
    log,
    services: [consoleService()],
  });
  return server;
}
/** The console's own origin (on loopback, a host name of the run: `http://c-….localhost:PORT`), from a link. */
const origins = new WeakMap<RunningServer, Promise<string>>();
const originOf = (s: RunningServer) => {
  if (!origins.has(s))
    origins.set(
      s,
      s.command!('console.link').then((r) => new URL((r as { url: string }).url).origin),
    );
  return origins.get(s)!;
};
/** A request to the console as a browser at its link's host name sends it. */
const at = async (s: RunningServer, path: string, init?: Parameters<typeof hostFetch>[1]) =>
  hostFetch(`${await originOf(s)}${path}`, init);
async function signIn(s: RunningServer): Promise<{ cookie: string; csrf: string }> {
  const { url } = (await s.command!('console.link')) as { url: string };
  const cookie = (await at(s, new URL(url).pathname + new URL(url).search)).headers.get('set-cookie')!.split(';')[0]!;
  const page = await (await at(s, '/console/users', { headers: { cookie } })).text();
  return { cookie, csrf: /name="csrf-token" content="([^"]+)"/.exec(page)![1]! };
}
const form = (o: Record<string, string>) => new URLSearchParams(o).toString();
const FORM = 'application/x-www-form-urlencoded';

const GETS = [
  '/console',
  '/console/events',
  '/console/bots',
  '/console/bots/tip-jar',
  '/console/users',
  '/console/users/usr_abcdefgh',
  '/console/clock',
  '/console/record',
  '/console/record.yaml',
  '/console/scenarios',
  '/console/plugins',
];
const POSTS = [
  '/console/bots/reload',
  '/console/bots/tip-jar/pause',
  '/console/bots/tip-jar/resume',
  '/console/users',
  ...[
    'check-balance',
    'send-message',
    'send-money',
    'request-contact',
    'introduce',
    'conversations/cnv_abcdefgh/messages',
    'transactions/txn_abcdefgh/accept',
    'contact-requests/creq_abcdefgh/decline',
    'introductions/int_abcdefgh/accept',
  ].map((p) => `/console/users/usr_abcdefgh/${p}`),
  '/console/clock/advance',
  '/console/clock/set',
  '/console/record/start',
  '/console/record/stop',
  '/console/record/clear',
  '/console/record/save',
  '/console/scenarios/run',
];

describe('console under attack', () => {
  it(
    'no route answers without a session: no cookie, a forged one, a malformed one (401, ' +
      'nothing logged as an error)',
    async () => {
      const s = await serve();
      for (const cookie of [
        undefined,
        'pinbot_console=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        'pinbot_console=%',
        'pinbot_console=%E0%A4%A',
      ]) {
        for (const path of GETS)
          expect([path, cookie, (await at(s, path, { headers: cookie ? { cookie } : {} })).status]).toEqual([
            path,
            cookie,
            401,
          ]);
        for (const path of POSTS)
          expect([
            path,
            cookie,
            (
              await at(s, path, {
                method: 'POST',
                headers: { 'content-type': FORM, ...(cookie ? { cookie } : {}) },
                body: form({ name: 'x', duration: '1d' }),
              })
            ).status,
          ]).toEqual([path, cookie, 401]);
      }
      expect(logged.filter((l) => l.includes('console request failed'))).toEqual([]);
    },
  );

  it(
    'a body it would refuse to parse is not parsed before the session is checked (401, ' + 'not 500 and an error log)',
    async () => {
      const s = await serve();
      const many = Array.from({ length: 60 }, (_, i) => `k${i}=v`).join('&');
      for (const body of [many, 'x='.padEnd(70_000, 'a')]) {
        const r = await at(s, '/console/users', { method: 'POST', headers: { 'content-type': FORM }, body });
        expect(r.status).toBe(401);
      }
      // signed in, the same bodies are refused as the sender’s error (413), not a failure of the console
      const { cookie } = await signIn(s);
      for (const body of [many, 'x='.padEnd(70_000, 'a')]) {
        const r = await at(s, '/console/users', { method: 'POST', headers: { cookie, 'content-type': FORM }, body });
        expect(r.status).toBe(413);
      }
      expect(logged.filter((l) => l.includes('console request failed'))).toEqual([]);
    },
  );

  it('every change needs the session’s CSRF token and a same-site request', async () => {
    const s = await serve();
    const { cookie, csrf } = await signIn(s);
    const other = await signIn(s);
    for (const path of POSTS) {
      for (const [headers, body] of [
        [{}, {}],
        [{}, { _csrf: 'x'.repeat(csrf.length) }],
        [{}, { _csrf: 'é'.repeat(csrf.length) }],
        [{}, { _csrf: other.csrf }],
        [{ 'x-csrf-token': other.csrf }, { _csrf: csrf }],
        [{ 'sec-fetch-site': 'cross-site' }, { _csrf: csrf }],
        [{ 'sec-fetch-site': 'same-site' }, { _csrf: csrf }],
      ] as Array<[Record<string, string>, Record<string, string>]>) {
        const r = await at(s, path, {
          method: 'POST',
          headers: { cookie, 'content-type': FORM, ...headers },
          body: form({ ...body, name: 'Mallory', duration: '1d', iso: '2030-01-01T00:00:00Z', file: 'x' }),
        });
        expect([path, headers, body, r.status]).toEqual([path, headers, body, 403]);
      }
    }
    // nothing changed: no user made, the clock where it was, no recording
    const users = await (await at(s, '/console/users', { headers: { cookie } })).text();
    expect(users).not.toContain('Mallory');
    expect(await (await at(s, '/console/clock', { headers: { cookie } })).text()).toContain('2026-11-21T12:00');
    expect(await (await at(s, '/console/record.yaml', { headers: { cookie } })).text()).toContain('steps: []');
  });

  it('a sign-in link works once under two concurrent uses', async () => {
    const s = await serve();
    for (let i = 0; i < 5; i++) {
      const { url } = (await s.command!('console.link')) as { url: string };
      const path = new URL(url).pathname + new URL(url).search;
      const statuses = (await Promise.all([at(s, path), at(s, path), at(s, path)])).map((r) => r.status).sort();
      expect(statuses).toEqual([303, 403, 403]);
    }
  });

  it(
    'a display name or message with markup stays text in every page, attributes ' +
      'included, and in the recorded YAML',
    async () => {
      const s = await serve();
      const { cookie, csrf } = await signIn(s);
      const post = (path: string, o: Record<string, string>) =>
        at(s, path, { method: 'POST', headers: { cookie, 'content-type': FORM }, body: form({ _csrf: csrf, ...o }) });
      const evil = `"'><img src=x onerror=alert(1)><script>alert(2)</script>`;
      const a = await post('/console/users', { name: `A${evil}`, balance: '10' });
      const aId = /\/console\/users\/(usr_\w+)/.exec(a.headers.get('location') ?? '')![1]!;
      const b = await post('/console/users', { name: `B${evil}` });
      const bId = /\/console\/users\/(usr_\w+)/.exec(b.headers.get('location') ?? '')![1]!;
      const bPin = /\(([A-Z0-9]{6})\)/.exec(
        await (await at(s, `/console/users/${bId}`, { headers: { cookie } })).text(),
      )![1]!;
      await post('/console/record/start', {});
      const content = `${evil}\nsteps:\n  - clock: { advance: 1d }\n---\nname: injected`;
      expect((await post(`/console/users/${aId}/send-message`, { to: bPin, content })).status).toBe(303);
      expect((await post(`/console/users/${aId}/send-money`, { to: bPin, amount: '1', note: evil })).status).toBe(303);
      for (const path of ['/console/users', `/console/users/${aId}`, `/console/users/${bId}`, '/console/record']) {
        const text = await (await at(s, path, { headers: { cookie } })).text();
        expect(text, path).not.toMatch(/<img|<script>alert|onerror=alert\(1\)>|"'>/);
      }
      const yaml = await (await at(s, '/console/record.yaml', { headers: { cookie } })).text();
      const doc = parse(yaml) as { name: string; steps: Array<{ body?: { content?: string; note?: string } }> };
      expect(doc.name).toBe('recorded in the console');
      expect(doc.steps[0]!.body!.content).toBe(content);
      expect(doc.steps[1]!.body!.note).toBe(evil);
    },
  );
});

describe('a recording replays what was typed, not a template', () => {
  it(
    '{{ }} and {% %} in a message and in an answer are literal in the saved scenario: ' +
      'it loads, replays the same text, never a key',
    async () => {
      tmp = tempDir('pinbot-console-attack-');
      const alice = { id: 'usr_aaaaaaaaaaaa', display_name: 'Alice', pin_code: 'AAAAAA' };
      const bob = { id: 'usr_bbbbbbbbbbbb', display_name: 'Bob', pin_code: 'BBBBBB' };
      const content = "key {{ users.Alice.api_key }} {% if true %}x{% endif %} {{- '{%' }} and an unclosed {% if";
      const yaml = writeScenarioYaml({
        name: 'r',
        userByPin: (pin) => (pin === bob.pin_code ? bob : undefined),
        steps: [
          {
            kind: 'request',
            balanceBefore: 0,
            req: {
              user: alice,
              method: 'POST',
              path: '/messages/send',
              body: { recipient_pin: 'BBBBBB', content },
              status: 201,
              answer: { content, sender: alice },
            },
          },
        ],
      });
      const doc = parse(yaml) as {
        steps: Array<{ body: Record<string, unknown>; expect: { body: Record<string, unknown> } }>;
      };
      const scope = { users: { Alice: { api_key: 'SECRET', pin_code: 'AAAAAA' }, Bob: { pin_code: 'BBBBBB' } } };
      expect(render(doc.steps[0]!.body, scope)).toEqual({ recipient_pin: 'BBBBBB', content });
      expect(render(doc.steps[0]!.expect.body, scope)).toEqual({ content });
      // and the file is a scenario that loads and passes
      mkdirSync(join(tmp.dir, 'scenarios'));
      const file = join(tmp.dir, 'scenarios', 'recorded.yaml');
      writeFileSync(file, yaml);
      const { scenarios, problems } = await loadAll([file]);
      expect(problems).toEqual([]);
      const result = await runScenario(scenarios[0]!);
      expect(result.status, JSON.stringify(result.steps.map((s) => s.error))).toBe('passed');
    },
  );
});

describe('what a signed-in browser can make the server hold', () => {
  it('a recording holds at most 1,000 steps, clock moves included', async () => {
    const s = await serve();
    const { cookie, csrf } = await signIn(s);
    const post = (path: string, o: Record<string, string>) =>
      at(s, path, { method: 'POST', headers: { cookie, 'content-type': FORM }, body: form({ _csrf: csrf, ...o }) });
    await post('/console/record/start', {});
    for (let i = 0; i < 1005; i++) expect((await post('/console/clock/advance', { duration: '1s' })).status).toBe(303);
    await post('/console/record/stop', {});
    const yaml = parse(await (await at(s, '/console/record.yaml', { headers: { cookie } })).text()) as {
      steps: unknown[];
    };
    expect(yaml.steps).toHaveLength(1000);
  });
});

describe('live pages', () => {
  it('at most 32 event streams are open at once, whatever the sessions: the oldest is closed', async () => {
    const s = await serve();
    const { cookie } = await signIn(s);
    const streams: Array<{ ended: Promise<boolean> }> = [];
    for (let i = 0; i < 40; i++) {
      const res = await at(s, '/console/events', { headers: { cookie } });
      const reader = res.body!.getReader();
      await reader.read(); // hello
      streams.push({ ended: reader.read().then((r) => r.done) });
    }
    // the first 8 were closed by the server (the 32 later ones stay open until it stops)
    expect(await Promise.all(streams.slice(0, 8).map((x) => x.ended))).toEqual(Array(8).fill(true));
  });
});

describe('file names from a form', () => {
  it('save recording as NAME and run scenario FILE reach only the scenarios folder', async () => {
    tmp = tempDir('pinbot-console-attack-');
    const scenariosDir = join(tmp.dir, 'project', 'scenarios');
    mkdirSync(scenariosDir, { recursive: true });
    writeFileSync(join(tmp.dir, 'project', 'package.json'), '{}');
    writeFileSync(
      join(scenariosDir, 'ok.yaml'),
      'name: ok\nusers: { alice: {} }\nsteps:\n  - clock: { advance: 1s }\n',
    );
    server = await startServer({
      dataDir: join(tmp.dir, 'data'),
      config: configFrom({ rate_limits: { anonymous: { limit: 100_000 } } }),
      host: '127.0.0.1',
      port: 0,
      virtualClock: Date.parse('2026-11-21T12:00:00Z'),
      log: pino({ level: 'silent' }),
      services: [consoleService({ scenariosDir, scenarios: scenarioPort(scenariosDir) })],
    });
    const s = server;
    const { cookie, csrf } = await signIn(s);
    const post = (path: string, o: Record<string, string>) =>
      at(s, path, { method: 'POST', headers: { cookie, 'content-type': FORM }, body: form({ _csrf: csrf, ...o }) });
    await post('/console/record/start', {});
    await post('/console/clock/advance', { duration: '1s' });
    const page = async (path: string) => (await at(s, path, { headers: { cookie } })).text();
    for (const file of [
      '../evil',
      '..',
      'a/b',
      '/tmp/evil',
      '.hidden',
      'x\u0000y',
      '..\\evil',
      'Evil',
      '%2e%2e%2fevil',
    ]) {
      expect((await post('/console/record/save', { file })).status).toBe(303);
      expect(await page('/console/record')).toContain('file name: lower-case letters, digits, - and _');
    }
    expect(readdirSync(scenariosDir)).toEqual(['ok.yaml']);
    expect(readdirSync(join(tmp.dir, 'project'))).toEqual(['package.json', 'scenarios']);
    // a file not listed is never run, however it is spelt
    for (const file of [
      '../package.json',
      '/etc/passwd',
      'scenarios/../package.json',
      'scenarios/ok.yaml/..',
      'scenarios/./ok.yaml',
    ]) {
      expect((await post('/console/scenarios/run', { file })).status).toBe(303);
      expect(await page('/console/scenarios')).toContain('is not a scenario file of this project');
    }
  });
});

describe('the anonymous budget', () => {
  it(
    'a signed-in console is not limited by it: live pages held open and a keyless flood ' +
      'from its address leave it working',
    async () => {
      tmp = tempDir('pinbot-console-attack-');
      server = await startServer({
        dataDir: join(tmp.dir, 'data'),
        config: configFrom({}),
        host: '127.0.0.1',
        port: 0,
        virtualClock: Date.parse('2026-11-21T12:00:00Z'),
        log: pino({ level: 'silent' }),
        services: [consoleService()],
      });
      const s = server;
      const { cookie } = await signIn(s);
      // 30 live pages (tabs) open at once
      const readers = [];
      for (let i = 0; i < 30; i++) {
        const r = (await at(s, '/console/events', { headers: { cookie } })).body!.getReader();
        await r.read();
        readers.push(r);
      }
      expect((await at(s, '/console/bots', { headers: { cookie } })).status).toBe(200);
      // a keyless flood from the same address (loopback: every local client) spends the budget
      for (let i = 0; i < 40; i++) await (await at(s, '/api/v1/me')).arrayBuffer();
      expect((await at(s, '/api/v1/me')).status).toBe(429);
      expect((await at(s, '/console/users', { headers: { cookie } })).status).toBe(200);
      // without a session the console is limited as before
      expect((await at(s, '/console/users')).status).toBe(429);
      for (const r of readers) await r.cancel();
    },
  );
});

describe('behind a TLS proxy', () => {
  it('with server.trust_proxy, a sign-in over https (X-Forwarded-Proto) sets a Secure cookie', async () => {
    tmp = tempDir('pinbot-console-attack-');
    server = await startServer({
      dataDir: join(tmp.dir, 'data'),
      config: configFrom({ server: { trust_proxy: 'loopback' } }),
      host: '127.0.0.1',
      port: 0,
      virtualClock: Date.parse('2026-11-21T12:00:00Z'),
      log: pino({ level: 'silent' }),
      services: [consoleService()],
    });
    const { url } = (await server.command!('console.link')) as { url: string };
    const r = await at(server, new URL(url).pathname + new URL(url).search, {
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(r.status).toBe(303);
    expect(r.headers.get('set-cookie')).toMatch(/; Secure$/);
  });
});

describe("the console's mount", () => {
  it(
    'only /console and what is under it reach the console: /consoles and /console-x are ' + "the API's (its JSON 404)",
    async () => {
      const s = await serve();
      for (const path of ['/consoles', '/console-x', '/consoles/bots']) {
        const r = await at(s, path);
        expect([path, r.status, r.headers.get('content-type') ?? '']).toEqual([
          path,
          404,
          expect.stringContaining('application/json'),
        ]);
      }
      for (const path of ['/console', '/console?x=1', '/console/bots'])
        expect([path, (await at(s, path)).status]).toEqual([path, 401]);
    },
  );
});

describe('the clock moves forward only (round 4)', () => {
  it('"Set time" to a time before now is refused, and the clock stays where it was', async () => {
    const s = await serve();
    const { cookie, csrf } = await signIn(s);
    const post = (path: string, o: Record<string, string>) =>
      at(s, path, { method: 'POST', headers: { cookie, 'content-type': FORM }, body: form({ _csrf: csrf, ...o }) });
    expect((await post('/console/clock/set', { iso: '2026-11-22T00:00:00Z' })).status).toBe(303);
    const forward = await (await at(s, '/console/clock', { headers: { cookie } })).text();
    expect(forward).toContain('now 2026-11-22T00:00:00.000Z');
    expect((await post('/console/clock/set', { iso: '2020-01-01T00:00:00Z' })).status).toBe(303);
    const page = await (await at(s, '/console/clock', { headers: { cookie } })).text();
    expect(page).toContain(
      'the clock moves forward only: 2020-01-01T00:00:00.000Z is before now (2026-11-22T00:00:00.000Z)',
    );
    expect(s.clock.now()).toBe(Date.parse('2026-11-22T00:00:00Z'));
    // a second before now too, and it is not recorded as a step
    await post('/console/record/start', {});
    await post('/console/clock/set', { iso: '2026-11-21T23:59:59Z' });
    await post('/console/record/stop', {});
    expect(s.clock.now()).toBe(Date.parse('2026-11-22T00:00:00Z'));
    expect(await (await at(s, '/console/record.yaml', { headers: { cookie } })).text()).toContain('steps: []');
  });
});
