import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client/client.js';
import { configFrom } from '../../src/config/load.js';
import { createKey } from '../../src/domain/users/keys.js';
import { createUser, findUser } from '../../src/domain/users/users.js';
import { createBotsService } from '../../src/services/bots.js';
import { metricsAccess, metricsService } from '../../src/services/metrics.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { METRIC_TABLE } from '../../src/telemetry/metrics.js';
import { tempDir } from '../helpers/api.js';
import { eventually } from '../helpers/serve-child.js';

const DOCS = join(import.meta.dirname, '../../docs/operations.md');

let server: RunningServer | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const c of cleanups.splice(0)) c();
});

/** A bot with one rule that answers `ping` and one whose condition never holds (a not-run). */
const PINGER = `name: pinger
as: Pinger Bot
create_user: true
rules:
  - id: pong
    on: message.received
    if: { content: { matches: "^ping" } }
    do:
      - reply: "pong"
  - id: never
    on: message.received
    if: { content: { equals: "this never comes" } }
    do:
      - reply: "impossible"
`;

/** A server as `serve` runs it, with bots and /metrics. */
async function serveWithBots(metrics: Record<string, unknown> = {}, host = '127.0.0.1') {
  const tmp = tempDir();
  cleanups.push(tmp.cleanup);
  const botsDir = join(tmp.dir, 'bots-src');
  mkdirSync(botsDir);
  writeFileSync(join(botsDir, 'pinger.yaml'), PINGER);
  const config = configFrom({ rate_limits: { enabled: false }, bots: { dir: botsDir }, metrics });
  const dataDir = join(tmp.dir, 'data');
  mkdirSync(dataDir);
  server = await startServer({
    dataDir,
    config,
    host,
    port: 0,
    log: pino({ level: 'silent' }),
    services: [createBotsService(), metricsService()],
  });
  return server;
}

async function userOf(s: RunningServer, name: string): Promise<{ key: string; pin: string; api: Client }> {
  const { user, key } = await s.store.transaction((tx) => {
    const user = createUser(tx, s.env, { name });
    return { user, key: createKey(tx, s.env, user.id).api_key };
  });
  return { key, pin: user.pin_code, api: createClient({ baseUrl: s.url, apiKey: key }) };
}

async function scrape(s: RunningServer, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${s.url}/metrics`, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
}

/** The value of one sample line (`name{labels} value`), 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const inner = line.slice(line.indexOf('{') + 1, line.lastIndexOf('}'));
    const parts = inner.split(',');
    if (want.every((w) => parts.includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

/** The table of docs/operations.md "Monitoring": name → { type, labels }. */
function docsTable(): Map<string, { type: string; labels: string[] }> {
  const text = readFileSync(DOCS, 'utf8');
  const start = text.indexOf('<!-- metric-table -->');
  const end = text.indexOf('<!-- /metric-table -->');
  expect(start).toBeGreaterThan(0);
  const out = new Map<string, { type: string; labels: string[] }>();
  for (const line of text.slice(start, end).split('\n')) {
    const m = /^\| `(pinbot_[a-z_]+)` \| (counter|gauge|histogram) \| ([^|]*) \|/.exec(line);
    if (m) out.set(m[1]!, { type: m[2]!, labels: [...m[3]!.matchAll(/`([a-z_]+)`/g)].map((x) => x[1]!) });
  }
  return out;
}

describe('GET /metrics', () => {
  it('the table in docs/operations.md lists every family of the code, with its type and labels', () => {
    const docs = docsTable();
    expect([...docs.keys()].sort()).toEqual(METRIC_TABLE.map((r) => r.name).sort());
    for (const row of METRIC_TABLE)
      expect(docs.get(row.name), row.name).toEqual({ type: row.type, labels: [...row.labels] });
    // the gauge of dialogs is served (test/bots/dialogs-crash.test.ts reads it from GET /metrics)
    expect(METRIC_TABLE.map((r) => r.name)).toContain('pinbot_bot_dialogs_waiting');
  });

  it('serves every family of the table and Node’s defaults; bot runs and not-runs move their counters', async () => {
    const s = await serveWithBots();
    const alice = await userOf(s, 'Alice Quuxington');
    const bot = await eventually(() => findUser(s.store.read, 'Pinger Bot'), 10_000, 'the bot user');
    // once running, the bot has its baseline: a message sent before it would not be new
    await eventually(
      async () =>
        ((await s.command!('bots.status')) as { bots: Array<{ status: string }> }).bots[0]?.status === 'running',
      10_000,
      'the bot running',
    );
    const before = await scrape(s);
    const runs = (outcome: string, text: string) =>
      sample(text, 'pinbot_bot_runs_total', { bot: 'pinger', rule: 'pong', outcome });
    const notRun = (text: string) =>
      sample(text, 'pinbot_bot_not_run_total', { bot: 'pinger', rule: 'never', reason: 'condition_false' });
    await alice.api.messages.send({ recipient_pin: bot.pin_code, content: 'ping secret-words-42' });
    await eventually(
      async () => {
        const conv = (await alice.api.conversations.list()).conversations[0];
        return conv && (await alice.api.conversations.messages(conv.id)).messages.some((m) => m.content === 'pong');
      },
      10_000,
      'the reply',
    );
    const after = await eventually(
      async () => {
        const t = await scrape(s);
        return runs('done', t) > runs('done', before) && notRun(t) > notRun(before) ? t : undefined;
      },
      10_000,
      'the counters',
    );
    expect(runs('done', after) - runs('done', before)).toBe(1);
    expect(notRun(after) - notRun(before)).toBe(1);
    expect(
      sample(after, 'pinbot_bot_runs_total', { bot: 'pinger', rule: 'never', outcome: 'not_run' }),
    ).toBeGreaterThanOrEqual(1);

    const types = new Map([...after.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
    for (const row of METRIC_TABLE) expect(types.get(row.name), row.name).toBe(row.type);
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
    ])
      expect(types.has(name), name).toBe(true);
    // the route is the pattern, never the path with its id
    expect(
      sample(after, 'pinbot_http_requests_total', {
        route: '/api/v1/conversations/:id/messages',
        method: 'GET',
        status: '200',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(after, 'pinbot_http_requests_total', { route: '/api/v1/messages/send', method: 'POST', status: '201' }),
    ).toBeGreaterThanOrEqual(1);
    expect(after).toMatch(
      /^pinbot_http_request_duration_seconds_bucket\{route="\/api\/v1\/messages\/send",method="POST",le="\+Inf"\} [1-9]/m,
    );
    expect(sample(after, 'pinbot_store_commit_duration_seconds_count', { driver: 'file' })).toBeGreaterThan(0);
    expect(after).toMatch(/^pinbot_store_journal_bytes [1-9]\d*$/m);
    expect(sample(after, 'pinbot_bot_event_to_action_seconds_count', { bot: 'pinger' })).toBeGreaterThanOrEqual(1);
  });

  it('holds no key, PIN, display name or message text, after real traffic', async () => {
    const s = await serveWithBots();
    const alice = await userOf(s, 'Zebulon Quuxington');
    const bot = await eventually(() => findUser(s.store.read, 'Pinger Bot'), 10_000, 'the bot user');
    // once running, the bot has its baseline: a message sent before it would not be new
    await eventually(
      async () =>
        ((await s.command!('bots.status')) as { bots: Array<{ status: string }> }).bots[0]?.status === 'running',
      10_000,
      'the bot running',
    );
    await alice.api.messages.send({ recipient_pin: bot.pin_code, content: 'ping the-private-words-77' });
    const conv = await eventually(
      async () => (await alice.api.conversations.list()).conversations[0],
      10_000,
      'a conversation',
    );
    await alice.api.conversations.messages(conv.id);
    // unknown and refused paths with secrets in them
    await fetch(`${s.url}/api/v1/users/${bot.pin_code}?key=${alice.key}`, { headers: { 'X-API-Key': alice.key } });
    await fetch(`${s.url}/${alice.pin}/${encodeURIComponent('Zebulon Quuxington')}`);
    await fetch(`${s.url}/api/v1/me`, { headers: { 'X-API-Key': 'pk_not_a_real_key_0123456789' } });
    const text = await eventually(
      async () => {
        const t = await scrape(s);
        return sample(t, 'pinbot_bot_runs_total', { bot: 'pinger', rule: 'pong', outcome: 'done' }) >= 1
          ? t
          : undefined;
      },
      10_000,
      'the run',
    );
    for (const secret of [
      alice.key,
      alice.key.slice(0, 12),
      alice.pin,
      bot.pin_code,
      'Zebulon',
      'Quuxington',
      'Pinger Bot',
      'the-private-words-77',
      conv.id,
      'pk_not_a_real',
    ]) {
      expect(text.includes(secret), secret).toBe(false);
    }
    expect(
      sample(text, 'pinbot_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, 'pinbot_http_requests_total', { route: '/api/v1/*', method: 'GET', status: '401' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('on loopback answers only to a loopback Host name; with a token, only to the bearer', async () => {
    const s = await serveWithBots();
    const port = new URL(s.url).port;
    const { request } = await import('node:http');
    const status = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/metrics', headers: { host } }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        req.on('error', reject).end();
      });
    expect(await status(`localhost:${port}`)).toBe(200);
    expect(await status('attacker.example')).toBe(421);
    expect((await fetch(`${s.url}/metrics`, { method: 'POST' })).status).toBe(405);
    expect((await fetch(`${s.url}/metrics/x`)).status).toBe(404);
    await s.close();
    server = undefined;

    const token = 'scrape-token-0123456789';
    const t = await serveWithBots({ token });
    const no = await fetch(`${t.url}/metrics`);
    expect(no.status).toBe(401);
    expect(no.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await no.json()) as unknown).toEqual({
      error: { code: 'unauthorized', message: expect.stringContaining('metrics.token') },
    });
    expect((await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${token}x` } })).status).toBe(401);
    expect(await scrape(t, { authorization: `Bearer ${token}` })).toContain('pinbot_http_requests_total');
  });

  it(
    'off the loopback address: not served without a token; `enabled: true` there ' + 'without one is refused at start',
    async () => {
      expect(metricsAccess({}, '0.0.0.0')).toEqual({
        serve: false,
        why: expect.stringContaining('metrics.token is not set'),
      });
      expect(() => metricsAccess({ enabled: true }, '0.0.0.0')).toThrow(
        /metrics\.enabled is true but the server listens on 0\.0\.0\.0.*metrics\.token/,
      );
      expect(metricsAccess({ token: 'x'.repeat(16) }, '0.0.0.0')).toEqual({ serve: 'token', token: 'x'.repeat(16) });
      expect(metricsAccess({ enabled: false, token: 'x'.repeat(16) }, '127.0.0.1')).toMatchObject({ serve: false });
      expect(metricsAccess({}, '::1')).toEqual({ serve: 'open' });
      const s = await serveWithBots({}, '0.0.0.0');
      const port = new URL(s.url).port;
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
    },
  );

  it('config.yaml: a short token or an unknown key is refused, naming the field', () => {
    expect(() => configFrom({ metrics: { token: 'short' } })).toThrow(
      /metrics\/token must NOT have fewer than 16 characters/,
    );
    expect(() => configFrom({ metrics: { token: 'has a space in it!!' } })).toThrow(
      /metrics\/token must match pattern/,
    );
    expect(() => configFrom({ metrics: { port: 9100 } })).toThrow(/metrics must NOT have additional properties/);
  });
});
