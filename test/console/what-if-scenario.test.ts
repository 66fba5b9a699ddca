import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/client.js';
import type { VirtualClock } from '../../src/clock/virtual-clock.js';
import { configFrom } from '../../src/config/load.js';
import { consoleService } from '../../src/console/service.js';
import type { Trace, WhatIfReport } from '../../src/runtime/index.js';
import { scenarioPort } from '../../src/scenario/console-port.js';
import { loadAll, runAll } from '../../src/scenario/run-all.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { defaultServices } from '../../src/services/index.js';
import { DATA_DIR } from '../../src/util/data-dir.js';
import { tempDir } from '../helpers/api.js';
import { hostFetch } from '../helpers/host-fetch.js';
import { eventually } from '../helpers/serve-child.js';
import { pinbot, ROOT } from '../helpers/spawn.js';

// The console's What if? on a bot page and its Make a scenario on a run (issue 32 items 1 and 2),
// over real HTTP: the same report and the same YAML as the CLI, acting on nothing.
const TIP_JAR = readFileSync(join(ROOT, 'bots/tip-jar.yaml'), 'utf8');
const EDITED = TIP_JAR.replace('amount: { max: 10 }', 'amount: { max: 5 }').replace(
  'amount: { min: 10.01 }',
  'amount: { min: 5.01 }',
);
const FORM = 'application/x-www-form-urlencoded';

let server: RunningServer | undefined;
let tmp: { dir: string; cleanup: () => void } | undefined;
afterEach(async () => {
  await server?.close();
  tmp?.cleanup();
  server = tmp = undefined;
});

/** A project (bots/, scenarios/, config.yaml) and its server with the console, three tips recorded. */
async function project() {
  tmp = tempDir('pinbot-console-what-if-');
  const dir = tmp.dir;
  for (const d of ['bots', 'scenarios']) mkdirSync(join(dir, d));
  const botFile = join(dir, 'bots/tip-jar.yaml');
  writeFileSync(botFile, TIP_JAR);
  writeFileSync(join(dir, 'config.yaml'), `bots: { dir: ${join(dir, 'bots')} }\n`);
  const s = await startServer({
    dataDir: join(dir, 'data'),
    config: configFrom({ bots: { dir: join(dir, 'bots') }, rate_limits: { enabled: false } }),
    host: '127.0.0.1',
    port: 0,
    virtualClock: Date.parse('2026-11-21T12:00:00Z'),
    log: pino({ level: process.env.TEST_LOG ?? 'silent' }),
    services: [...defaultServices(), consoleService({ scenarios: scenarioPort(join(dir, 'scenarios')) })],
  });
  server = s;
  const jar = await eventually(
    async () => {
      const { bots } = (await s.command!('bots.status')) as {
        bots: Array<{ name?: string; status: string; message?: string }>;
      };
      return bots.find((b) => b.name === 'tip-jar' && b.status === 'running');
    },
    15_000,
    'the tip jar to run',
  );
  const jarPin = /\(([A-Z0-9]{6})\)/.exec(jar.message ?? '')![1]!;
  const { api_key } = (await s.command!('users.add', { name: 'alice', balance: '30' })) as { api_key: string };
  const alice = createClient({ baseUrl: s.url, apiKey: api_key });
  const tips = [];
  for (const amount of [3, 7, 12]) {
    tips.push((await alice.wallet.send({ recipient_pin: jarPin, amount })).transaction);
    await (s.clock as VirtualClock).settle();
  }
  await eventually(
    async () => {
      const { traces } = (await s.command!('bots.trace', { name: 'tip-jar', limit: 100 })) as { traces: Trace[] };
      return traces.length === 6 || undefined;
    },
    15_000,
    'six traces',
  );
  return { s, dir, botFile, tips, jarPin, cli: ['--data', join(dir, 'data'), '--config', join(dir, 'config.yaml')] };
}

/** Signs in as a browser would; a fetch of console paths with the cookie, and the CSRF token. */
async function signIn(s: RunningServer) {
  const link = new URL(((await s.command!('console.link')) as { url: string }).url);
  const cookie = (await hostFetch(link.href)).headers.get('set-cookie')!.split(';')[0]!;
  const at = (path: string, init: Parameters<typeof hostFetch>[1] = {}) =>
    hostFetch(`${link.origin}${path}`, { ...init, headers: { cookie, ...init.headers } });
  const page = await (await at('/console/bots')).text();
  return { at, origin: link.origin, csrf: /name="csrf-token" content="([^"]+)"/.exec(page)![1]! };
}

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, '')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

describe('console: What if? on a bot page', () => {
  it('replays the file on disk against the recorded decisions as the CLI does, acting on ' +
    'nothing; POST with CSRF only', async () => {
    const { s, dir, botFile, cli, jarPin } = await project();
    const { at, origin, csrf } = await signIn(s);
    const bot = await (await at('/console/bots/tip-jar')).text();
    expect(bot).toContain('action="/console/bots/tip-jar/what-if"');
    const whatIf = (body: Record<string, string>, headers: Record<string, string> = {}) =>
      at('/console/bots/tip-jar/what-if', {
        method: 'POST',
        headers: { 'content-type': FORM, ...headers },
        body: new URLSearchParams(body).toString(),
      });
    // without a session: the sign-in page; without the CSRF token or from another site: refused
    const anon = await hostFetch(`${origin}/console/bots/tip-jar/what-if`, { method: 'POST', body: '' });
    expect(anon.status).toBe(401);
    expect((await whatIf({})).status).toBe(403);
    expect(
      (await whatIf({ _csrf: csrf }, { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' })).status,
    ).toBe(403);

    // the unchanged file changes nothing
    let r = await whatIf({ _csrf: csrf });
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toBe('/console/bots/tip-jar/what-if');
    let page = await (await at('/console/bots/tip-jar/what-if')).text();
    expect(page).toContain('data-what-if="same" data-changed="0" data-events="3"');
    expect(page).toContain('this edit changes 0 of the last 3 decisions of tip-jar');

    // the cap edited on disk: exactly the 7 changes, as the CLI says, and nothing is written
    writeFileSync(botFile, EDITED);
    const journal = join(dir, 'data', DATA_DIR.journal);
    const size = statSync(journal).size;
    r = await whatIf({ _csrf: csrf });
    expect(r.status).toBe(303);
    page = await (await at('/console/bots/tip-jar/what-if')).text();
    await (s.clock as VirtualClock).settle();
    expect(statSync(journal).size).toBe(size);
    const report = JSON.parse((await pinbot(['bots', 'what-if', botFile, '--json', ...cli])).stdout) as WhatIfReport;
    expect(report.changed).toBe(1);
    expect(page).toContain(`data-what-if="changed" data-changed="1" data-events="3"`);
    expect(text(page)).toContain(report.summary);
    const changed = report.events.find((e) => e.status === 'changed')!;
    const from = page.indexOf(`<li class="what-if-event status-changed" data-event="${changed.event}"`);
    expect(from).toBeGreaterThan(0);
    const item = page.slice(from, page.indexOf('</table>', from));
    for (const c of changed.changes) expect(text(item)).toContain(c);
    // each rule recorded and as the edited file decides, with the condition's value seen
    expect(text(item)).toContain('not run: condition_falseamount max 5 (amount = 7)');
    expect(item).toContain(
      '<td class="decision runs"><strong>runs</strong><br><span class="saw">amount max 10 (amount = 7)</span>',
    );

    // an invalid file: its problems, nothing replayed
    writeFileSync(botFile, TIP_JAR.replace('- accept', '- acept'));
    await whatIf({ _csrf: csrf });
    page = await (await at('/console/bots/tip-jar/what-if')).text();
    expect(page).toContain('data-what-if="invalid"');
    expect(text(page)).toMatch(/tip-jar\.yaml:\d+:\d+: rules\.0\.do\.0: unknown action "acept"/);
    // not a bot: 404
    expect(
      (
        await at('/console/bots/nope/what-if', {
          method: 'POST',
          headers: { 'content-type': FORM },
          body: `_csrf=${csrf}`,
        })
      ).status,
    ).toBe(404);

    // a name with markup, in an event and in a rendered reply, is shown as text
    writeFileSync(botFile, TIP_JAR);
    const evil = `A"'><img src=x onerror=alert(1)><script>alert(2)</script>`;
    const { api_key } = (await s.command!('users.add', { name: evil, balance: '9' })) as { api_key: string };
    await createClient({ baseUrl: s.url, apiKey: api_key }).wallet.send({ recipient_pin: jarPin, amount: 7 });
    await eventually(
      async () => {
        await (s.clock as VirtualClock).settle();
        const { traces } = (await s.command!('bots.trace', { name: 'tip-jar', limit: 100 })) as { traces: Trace[] };
        return traces.some((t) => t.event.summary.includes('onerror')) || undefined;
      },
      15_000,
      'the tip of the name with markup',
    );
    writeFileSync(botFile, EDITED);
    await whatIf({ _csrf: csrf });
    page = await (await at('/console/bots/tip-jar/what-if')).text();
    expect(text(page)).toContain(`transfer.received 7 from ${evil}`);
    expect(text(page)).toContain(`reply ${JSON.stringify(`That is very generous, ${evil}, but`).slice(0, -1)}`);
    expect(page).toContain('&lt;script&gt;alert(2)&lt;/script&gt;');
    expect(page).not.toMatch(/<img|<script>alert|onerror=alert\(1\)>/);
  }, 120_000);
});

describe('console: Make a scenario on a run', () => {
  it('downloads the YAML of bots trace --scenario, which passes against the unchanged bot', async () => {
    const { s, dir, tips, cli } = await project();
    const { at } = await signIn(s);
    const bot = await (await at('/console/bots/tip-jar')).text();
    const key = `transfer.received:${tips[1]!.id}`;
    expect(bot).toContain(
      `href="/console/bots/tip-jar/scenario.yaml?run=${encodeURIComponent(key)}" download>Make a scenario</a>`,
    );
    const r = await at(`/console/bots/tip-jar/scenario.yaml?run=${encodeURIComponent(key)}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/yaml/);
    expect(r.headers.get('content-disposition')).toBe(`attachment; filename="tip-jar-${tips[1]!.id}.yaml"`);
    const yaml = await r.text();
    const out = join(dir, 'scenarios/cli.yaml');
    const c = await pinbot(['bots', 'trace', 'tip-jar', '--scenario', tips[1]!.id, '--out', out, ...cli]);
    expect(c.code).toBe(0);
    expect(yaml).toBe(readFileSync(out, 'utf8'));
    expect(yaml).toContain('file: ../bots/tip-jar.yaml');
    // the bot's user under its display name (replies may quote it), named in templates with brackets
    expect(yaml).toContain('as: Tip Jar');
    expect(yaml).toContain(`recipient_pin: "{{ users['Tip Jar'].pin_code }}"`);

    const file = join(dir, 'scenarios/from-console.yaml');
    writeFileSync(file, yaml);
    const { scenarios, problems } = await loadAll([file]);
    expect(problems).toEqual([]);
    expect((await runAll(scenarios, { parallel: 1 })).results[0]!.status).toBe('passed');

    // a run it does not have: back to the bot page, which says what runs it has
    const none = await at('/console/bots/tip-jar/scenario.yaml?run=txn_nope');
    expect(none.status).toBe(303);
    const page = await (await at('/console/bots/tip-jar')).text();
    expect(text(page)).toContain('make a scenario: no run of this bot for "txn_nope" in its recorded traces');
    // not a run at all (a path, markup): refused before anything is read
    expect((await at('/console/bots/tip-jar/scenario.yaml?run=..%2F..%2Fetc')).status).toBe(303);
  }, 120_000);
});
