import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pino } from 'pino';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { configFrom } from '../../src/config/load.js';
import { consoleService } from '../../src/console/service.js';
import { scenarioPort } from '../../src/scenario/console-port.js';
import { findUser } from '../../src/domain/users/users.js';
import { TRACE_REASONS } from '../../src/runtime/index.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { defaultServices } from '../../src/services/index.js';
import { tempDir } from '../helpers/api.js';
import { launchChromium, SKIP_BROWSER } from '../helpers/browser.js';

/**
 * The web console in a real browser (a Chromium through playwright-core, found by
 * test/helpers/browser.ts: PINBOT_CHROMIUM, the system's, or the bundled one) against a real
 * server on a virtual clock, with the example tip jar. One browser for the file; the tests run
 * in order and build on each other (Bob tips, then the clock moves, then a recording).
 * PINBOT_SKIP_BROWSER=1 skips them; a browser that cannot be found or started fails them.
 */
const ROOT = join(import.meta.dirname, '../..');
const SHOTS = process.env.PINBOT_SCREENSHOTS;
const T0 = Date.parse('2026-11-21T12:00:00Z');

let tmp: { dir: string; cleanup: () => void };
let server: RunningServer;
let browser: Browser;
let context: BrowserContext;
let linkClock: VirtualClock;
/** The console's own origin: `http://c-….localhost:PORT` (the host name its links name). */
let consoleOrigin: string;
const seen: string[] = []; // every page text and URL the browser got, for the no-key check

async function link(): Promise<string> {
  return ((await server.command!('console.link')) as { url: string }).url;
}

async function shot(page: Page, name: string): Promise<void> {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/** Opens a console page, noting what it showed. */
async function open(page: Page, path: string): Promise<void> {
  await page.goto(`${consoleOrigin}${path}`);
}

function watch(page: Page): void {
  page.on('response', async (r) => {
    seen.push(r.url());
    if ((r.headers()['content-type'] ?? '').startsWith('text/html')) seen.push(await r.text().catch(() => ''));
  });
}

/** A bot that asks (for the Dialogs section of its page). */
const SHOP = `name: shop
as: Shop
create_user: true
rules:
  - id: order
    on: message.received
    if: { content: { matches: "^order$" } }
    do:
      - ask: { question: "What size?", save: size, timeout: 10m }
      - reply: "got {{ answers.size }}"
`;

describe.skipIf(SKIP_BROWSER)('the web console in a browser', () => {
  beforeAll(async () => {
    tmp = tempDir('pinbot-console-');
    const botsDir = join(tmp.dir, 'bots');
    mkdirSync(botsDir);
    writeFileSync(join(botsDir, 'tip-jar.yaml'), readFileSync(join(ROOT, 'bots/tip-jar.yaml'), 'utf8'));
    writeFileSync(join(botsDir, 'shop.yaml'), SHOP);
    linkClock = new VirtualClock(T0);
    server = await startServer({
      dataDir: join(tmp.dir, 'data'),
      config: configFrom({
        bots: { dir: botsDir },
        plugins: { dir: join(tmp.dir, 'plugins') },
        rate_limits: { general: { limit: 10_000 } },
      }),
      host: '127.0.0.1',
      port: 0,
      virtualClock: T0,
      log: pino({ level: process.env.TEST_LOG ?? 'silent' }),
      services: [
        ...defaultServices(),
        consoleService({
          linkClock,
          scenariosDir: join(tmp.dir, 'scenarios'),
          scenarios: scenarioPort(join(tmp.dir, 'scenarios')),
        }),
      ],
    });
    ({ browser } = await launchChromium());
    consoleOrigin = new URL(await link()).origin;
    context = await browser.newContext({ viewport: { width: 1000, height: 800 } });
    context.setDefaultTimeout(15_000);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    tmp?.cleanup();
  });

  it(
    'signs in through a one-time link; a reused or expired link is refused; the cookie ' +
      'is HttpOnly and SameSite=Strict',
    async () => {
      const page = await context.newPage();
      watch(page);
      const anonymous = await page.goto(`${server.url}/console/bots`);
      expect(anonymous!.status()).toBe(401);
      expect(await page.getByRole('heading', { name: 'Sign in' }).isVisible()).toBe(true);

      const url = await link();
      const res = await page.goto(url);
      expect(res!.status()).toBe(200);
      expect(new URL(page.url()).pathname).toBe('/console/bots');
      await page.getByRole('heading', { name: 'Bots' }).waitFor();
      const [cookie] = await context.cookies();
      expect(cookie).toMatchObject({ name: 'pinbot_console', httpOnly: true, sameSite: 'Strict', path: '/console' });
      const headers = res!.request().redirectedFrom() ? (await page.reload())!.headers() : res!.headers();
      expect(headers['content-security-policy']).toContain("default-src 'self'");
      expect(headers['content-security-policy']).toContain("script-src 'self'");
      expect(headers['x-frame-options']).toBe('DENY');
      expect(headers['referrer-policy']).toBe('no-referrer');

      // the same link again, in a browser without the session: refused
      const other = await browser.newContext();
      const again = await other.newPage();
      expect((await again.goto(url))!.status()).toBe(403);
      await again.getByRole('heading', { name: /does not work/ }).waitFor();
      // a fresh link that waited longer than console.link_ttl (10 minutes): refused
      const late = await link();
      await linkClock.advance(10 * 60_000 + 1);
      expect((await again.goto(late))!.status()).toBe(403);
      expect(await other.cookies()).toEqual([]);
      await other.close();
      await shot(page, 'bots');
      await page.close();
    },
  );

  it(
    'the session cookie does not go to another listener of 127.0.0.1 or localhost ' +
      '(cookies are not scoped by port)',
    async () => {
      // another local program's web page, which the operator opens in the same browser
      const cookies: string[] = [];
      const other = createServer((req, res) => {
        if (req.url !== '/favicon.ico') cookies.push(req.headers.cookie ?? '');
        res.end('another program');
      });
      await new Promise<void>((r) => other.listen(0, '127.0.0.1', () => r()));
      const port = (other.address() as AddressInfo).port;
      try {
        const page = await context.newPage();
        await open(page, '/console/bots');
        await page.getByRole('heading', { name: 'Bots' }).waitFor();
        expect((await context.cookies()).map((c) => c.name)).toContain('pinbot_console');
        for (const url of [
          `http://127.0.0.1:${port}/`,
          `http://localhost:${port}/`,
          `http://127.0.0.1:${port}/console/bots`,
        ])
          await page.goto(url);
        expect(cookies).toHaveLength(3);
        expect(cookies.filter((c) => c.includes('pinbot_console'))).toEqual([]);
        await page.close();
      } finally {
        await new Promise((r) => other.close(r));
      }
    },
  );

  it(
    "tip jar: Bob (created with a grant) tips 5; the jar's run and Bob's thank-you " +
      'appear without a reload, and the rule that did not fire says why',
    async () => {
      const bots = await context.newPage();
      watch(bots);
      await open(bots, '/console/bots');
      await bots.locator('tr[data-bot="tip-jar"] .state-running').waitFor();
      const jar = findUser(server.store.read, 'Tip Jar')!;

      const bob = await context.newPage();
      watch(bob);
      await open(bob, '/console/users');
      await bob.getByLabel('Name').fill('Bob');
      await bob.getByLabel('Grant').fill('20');
      await bob.getByRole('button', { name: 'Create user' }).click();
      await bob.getByRole('heading', { name: /Acting as Bob/ }).waitFor();
      await expect.poll(() => bob.locator('[data-balance]').textContent()).toBe('20');

      await bots.getByRole('link', { name: 'tip-jar' }).click();
      await bots.getByRole('heading', { name: 'Bot tip-jar' }).waitFor();
      await bots.evaluate(() => ((window as unknown as { marker: number }).marker = 1));

      const money = bob.locator('form[action$="/send-money"]');
      await money.getByLabel('To (PIN)').fill(jar.pin_code);
      await money.getByLabel('Amount').fill('5');
      await money.getByRole('button', { name: 'Send money' }).click();
      await bob.getByRole('status').filter({ hasText: 'POST /wallet/send → 201' }).waitFor();
      await bob.evaluate(() => ((window as unknown as { marker: number }).marker = 1));

      // the bot page, opened before the tip, shows the runs as they happen
      const done = bots.locator('li.run[data-rule="thank-small-tips"]');
      await done.locator('.outcome', { hasText: 'DONE' }).waitFor();
      await expect.poll(() => done.locator('.steps').textContent()).toMatch(/accept: done[\s\S]*reply: done/);
      const notRun = bots.locator('li.run[data-rule="refuse-large-tips"]');
      await notRun.locator('.outcome', { hasText: 'NOT RUN' }).waitFor();
      // in the words of the trace-reason catalogue
      const words = TRACE_REASONS.condition_false;
      expect(await notRun.locator('.reason').textContent()).toBe(
        `NOT RUN: condition_false — ${words.meaning.replace(/`/g, '')}. What to do: ${words.todo.replace(/`/g, '')}.`,
      );
      expect(await notRun.locator('.conditions li.failed').first().textContent()).toBe(
        '✗ amount min 10.01 (saw amount = 5)',
      );
      // Bob's page shows the thank-you when it arrives
      await bob.locator('.message .content', { hasText: 'Thank you Bob for the tip of 5!' }).waitFor();
      await expect.poll(() => bob.locator('[data-balance]').textContent()).toBe('15');
      expect(await bots.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(1);
      expect(await bob.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(1);

      // "why didn't it fire": only the rules that did not run
      await bots.getByLabel(/Why didn't it fire/).check();
      await bots.getByRole('button', { name: 'Filter' }).click();
      await bots.locator('li.run[data-rule="refuse-large-tips"]').waitFor();
      expect(await bots.locator('li.run[data-rule="thank-small-tips"]').count()).toBe(0);
      await shot(bots, 'bot-timeline');
      await shot(bob, 'act-as-bob');
      await bots.close();
      await bob.close();
    },
  );

  it('pauses a bot (a tip waits) and resumes it (the tip is handled)', async () => {
    const bots = await context.newPage();
    watch(bots);
    await open(bots, '/console/bots/tip-jar');
    await bots.getByRole('button', { name: 'Pause tip-jar' }).click();
    await bots.locator('.state-paused').waitFor();
    const runs = await bots.locator('li.run').count();
    const bob = await context.newPage();
    watch(bob);
    await open(bob, `/console/users/${findUser(server.store.read, 'Bob')!.id}`);
    const money = bob.locator('form[action$="/send-money"]');
    await money.getByLabel('To (PIN)').fill(findUser(server.store.read, 'Tip Jar')!.pin_code);
    await money.getByLabel('Amount').fill('3');
    await money.getByRole('button', { name: 'Send money' }).click();
    await bob.getByRole('status').filter({ hasText: 'POST /wallet/send → 201' }).waitFor();
    await (server.clock as VirtualClock).advance(60_000); // a minute: a running jar would have taken it
    expect(await bots.locator('li.run').count()).toBe(runs);
    expect(await bots.locator('.state-paused').count()).toBe(1);
    await bots.getByRole('button', { name: 'Resume tip-jar' }).click();
    await bots.locator('.state-running').waitFor();
    await bob.locator('.message .content', { hasText: 'Thank you Bob for the tip of 3!' }).waitFor();
    await expect.poll(() => bob.locator('[data-balance]').textContent()).toBe('12');
    await bots.close();
    await bob.close();
  });

  it(
    "charts: each bot's runs over the last hour and day, its answer times and not-run " +
      "reasons, and the server's health line",
    async () => {
      const { traces } = (await server.command!('bots.trace', { name: 'tip-jar', limit: 100 })) as {
        traces: Array<{ outcome: string; reason?: string; rule: string }>;
      };
      const ran = traces.filter((t) => t.outcome !== 'not_run').length;
      const notRun = traces.filter((t) => t.reason === 'condition_false').length;
      expect(ran).toBe(2); // the tips of 5 and 3
      const page = await context.newPage();
      watch(page);
      await open(page, '/console/bots');
      const row = page.locator('tr[data-bot="tip-jar"]');
      const hour = row.locator('svg[data-chart="runs-hour"]');
      const values = (await hour.getAttribute('data-values'))!.split(',').map(Number);
      expect(values).toHaveLength(60);
      expect(values.reduce((a, b) => a + b, 0)).toBe(ran);
      expect((await hour.getAttribute('data-failed'))!.split(',').every((v) => v === '0')).toBe(true);
      // one rect per minute that had runs, drawn inside the chart
      expect(await hour.locator('rect.bar').count()).toBe(values.filter((v) => v > 0).length);
      expect(await hour.getAttribute('aria-label')).toBe(`tip-jar: runs, last hour: ${ran} runs, 0 failed`);
      const day = row.locator('svg[data-chart="runs-day"]');
      expect(
        (await day.getAttribute('data-values'))!
          .split(',')
          .map(Number)
          .reduce((a, b) => a + b, 0),
      ).toBe(ran);
      const health = page.locator('[data-health]');
      expect(await health.getAttribute('data-errors')).toBe('0');
      expect(Number(await health.getAttribute('data-commit-ms'))).toBeGreaterThan(0);
      expect(await health.textContent()).toMatch(
        /requests\/s[\s\S]*0 server errors \(5xx\) in the last hour[\s\S]*commit [\d.]+ ms/,
      );
      await shot(page, 'bots');

      await page.getByRole('link', { name: 'tip-jar' }).click();
      await page.getByRole('heading', { name: 'Bot tip-jar' }).waitFor();
      const reasons = page.locator('svg[data-chart="not-run"]');
      expect(await reasons.getAttribute('data-values')).toBe(`condition_false=${notRun}`);
      expect(await reasons.locator('text.count').first().textContent()).toBe(String(notRun));
      const latency = page.locator('svg[data-chart="latency"]');
      const answered = (await latency.getAttribute('data-values'))!.split(',').map((kv) => Number(kv.split('=')[1]));
      expect(answered.reduce((a, b) => a + b, 0)).toBe(ran);
      expect(await page.getByText(`From event to answer (${ran} answered)`).isVisible()).toBe(true);
      await shot(page, 'bot-charts');
      await page.close();
    },
  );

  it("the clock: advancing a virtual day fires UBI, listed as it happens, and Bob's balance moves live", async () => {
    const bob = await context.newPage();
    watch(bob);
    await open(bob, `/console/users/${findUser(server.store.read, 'Bob')!.id}`);
    await expect.poll(() => bob.locator('[data-balance]').textContent()).toBe('12');
    const clock = await context.newPage();
    watch(clock);
    await open(clock, '/console/clock');
    expect(await clock.locator('[data-now]').textContent()).toBe('2026-11-21T12:01:00.000Z');
    await clock.getByLabel('Advance by').fill('1d');
    await clock.getByRole('button', { name: 'Advance' }).click();
    await clock.getByRole('status').filter({ hasText: 'now 2026-11-22T12:01:00.000Z' }).waitFor();
    await clock.locator('.jobs li', { hasText: 'ubi' }).first().waitFor();
    await expect.poll(() => bob.locator('[data-balance]').textContent()).toBe('13');
    await shot(clock, 'clock');
    await clock.close();
    await bob.close();
  });

  it('user text is shown as text: <img onerror> and <script> in a message run nothing', async () => {
    const page = await context.newPage();
    watch(page);
    await open(page, '/console/users');
    await page.getByLabel('Name').fill('Mallory <b>');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('heading', { name: 'Acting as Mallory <b>' }).waitFor();
    const evil = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>';
    const form = page.locator('form[action$="/send-message"]');
    await form.getByLabel('To (PIN)').fill(findUser(server.store.read, 'Bob')!.pin_code);
    await form.getByLabel('Message').fill(evil);
    await form.getByRole('button', { name: 'Send message' }).click();
    const shown = page.locator('.message .content', { hasText: '<img src=x' });
    await shown.waitFor();
    expect(await shown.textContent()).toBe(evil);
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.locator('main script').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    // readable at 360 px: nothing wider than the screen
    await page.setViewportSize({ width: 360, height: 740 });
    for (const path of ['/console/bots', '/console/bots/tip-jar', page.url().replace(consoleOrigin, '')]) {
      await open(page, path);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    }
    await page.close();
  });

  it('a change without the CSRF token is refused, and changes nothing', async () => {
    const page = await context.newPage();
    await open(page, '/console/users');
    const status = await page.evaluate(
      async () =>
        (
          await fetch('/console/users', {
            method: 'POST',
            headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
            body: 'name=Eve&balance=5',
          })
        ).status,
    );
    expect(status).toBe(403);
    const wrong = await page.evaluate(
      async () =>
        (
          await fetch('/console/users', {
            method: 'POST',
            headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
            body: 'name=Eve&_csrf=guess',
          })
        ).status,
    );
    expect(wrong).toBe(403);
    expect(findUser(server.store.read, 'Eve')).toBeUndefined();
    await page.close();
  });

  it('records a two-user exchange, saves it, and `pinbot scenario run` passes on the saved file', async () => {
    const page = await context.newPage();
    watch(page);
    await open(page, '/console/users');
    for (const name of ['Alice', 'Carol']) {
      await page.getByLabel('Name').fill(name);
      await page.getByLabel('Grant').fill('30');
      await page.getByRole('button', { name: 'Create user' }).click();
      await page.getByRole('heading', { name: `Acting as ${name}` }).waitFor();
      await open(page, '/console/users');
    }
    const alice = findUser(server.store.read, 'Alice')!;
    const carol = findUser(server.store.read, 'Carol')!;
    await open(page, '/console/record');
    await page.getByRole('button', { name: 'Start recording' }).click();
    await page.getByRole('status').filter({ hasText: 'Recording: 0 steps' }).waitFor();

    await open(page, `/console/users/${alice.id}`);
    const money = page.locator('form[action$="/send-money"]');
    await money.getByLabel('To (PIN)').fill(carol.pin_code);
    await money.getByLabel('Amount').fill('7.5');
    await money.getByLabel('Note').fill('lunch');
    await money.getByRole('button', { name: 'Send money' }).click();
    await page.getByRole('status').filter({ hasText: '→ 201' }).waitFor();

    await open(page, `/console/users/${carol.id}`);
    await page.getByRole('button', { name: /Accept 7.5 from Alice/ }).click();
    await page.getByRole('status').filter({ hasText: '/accept → 200' }).waitFor();
    const msg = page.locator('form[action$="/send-message"]');
    await msg.getByLabel('To (PIN)').fill(alice.pin_code);
    await msg.getByLabel('Message').fill('Thanks for lunch!');
    await msg.getByRole('button', { name: 'Send message' }).click();
    await page.getByRole('status').filter({ hasText: '/messages/send → 201' }).waitFor();
    await page.locator('article.conversation').first().getByLabel('Reply').fill('See you');
    await page.locator('article.conversation').first().getByRole('button', { name: 'Reply' }).click();
    await page.getByRole('status').filter({ hasText: '/messages → 201' }).waitFor();

    await open(page, '/console/clock');
    await page.getByLabel('Advance by').fill('1d');
    await page.getByRole('button', { name: 'Advance' }).click();
    await page.getByRole('status').filter({ hasText: 'now ' }).waitFor();
    await open(page, `/console/users/${alice.id}`);
    await page.getByRole('button', { name: 'Check balance' }).click();
    await page.getByRole('status').filter({ hasText: 'GET /wallet/balance → 200 (balance 23.5)' }).waitFor();

    await open(page, '/console/record');
    await page.getByRole('button', { name: 'Stop recording' }).click();
    await page.getByRole('status').filter({ hasText: 'Not recording: 6 steps' }).waitFor();
    const yaml = await page.getByLabel('Scenario YAML').textContent();
    expect(yaml).toContain('save:');
    expect(yaml).toContain('{{ tx1 }}');
    expect(yaml).toContain('{{ users.Carol.pin_code }}');
    expect(yaml).toMatch(
      new RegExp(
        String.raw`- clock:\n\s+advance: 1d\n\s+- as: Alice\n\s+request: GET ` +
          String.raw`\/wallet\/balance\n\s+expect:\n\s+status: 200\n\s+body:\n\s+balance: ` +
          String.raw`23.5`,
      ),
    );
    await shot(page, 'record');
    await page.getByLabel('File name').fill('lunch-recorded');
    await page.getByRole('button', { name: 'Save scenario' }).click();
    await page.getByRole('status').filter({ hasText: 'saved' }).waitFor();
    const file = join(tmp.dir, 'scenarios', 'lunch-recorded.yaml');
    expect(readFileSync(file, 'utf8')).toBe(yaml);

    const run = spawnSync(process.execPath, [join(ROOT, 'bin/pinbot.js'), 'scenario', 'run', file, '--in-process'], {
      cwd: tmp.dir,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    });
    expect(run.stdout + run.stderr).toContain('1 passed');
    expect(run.status).toBe(0);
    await page.close();
  });

  it('runs a scenario file of the project and shows its steps as they end; a failure shows its diff', async () => {
    writeFileSync(
      join(tmp.dir, 'scenarios', 'broken.yaml'),
      'name: broken\nusers: { alice: { balance: 5 } }\nsteps:\n  - as: alice\n    ' +
        'request: GET /wallet/balance\n    expect: { body: { balance: 6 } }\n',
    );
    const page = await context.newPage();
    watch(page);
    await open(page, '/console/scenarios');
    await page.getByRole('button', { name: /Run .*lunch-recorded\.yaml/ }).click();
    await page.locator('.run-status', { hasText: 'passed' }).waitFor();
    expect(await page.locator('.scenario-steps li.step-passed').count()).toBe(6);
    // each step's result as the terminal report shows it: a request's status, then the time
    const infos = await page.locator('.scenario-steps li.step-passed small').allTextContents();
    expect(
      infos.some((t) => /^20\d · \d+ ms$/.test(t)),
      infos.join(' | '),
    ).toBe(true);
    await shot(page, 'scenarios');
    await page.getByRole('button', { name: /Run .*broken\.yaml/ }).click();
    await page.locator('.run-status', { hasText: 'failed' }).waitFor();
    const failure = await page.locator('.scenario-steps li.step-failed pre.failure').textContent();
    expect(failure).toContain('body.balance');
    expect(failure).toMatch(/- expected 6\n\s*\+ actual\s+5/);
    expect(failure).toContain('broken.yaml:4:5');
    await page.close();
  });

  it('contacts and introductions: ask, introduce, and answer what is pending', async () => {
    const [alice, bob, carol] = ['Alice', 'Bob', 'Carol'].map((n) => findUser(server.store.read, n)!);
    const page = await context.newPage();
    watch(page);
    await open(page, `/console/users/${alice!.id}`);
    await page.locator('form[action$="/request-contact"]').getByLabel('PIN').fill(bob!.pin_code);
    await page.getByRole('button', { name: 'Send contact request' }).click();
    await page.getByRole('status').filter({ hasText: 'POST /contacts/request → 201' }).waitFor();
    const intro = page.locator('form[action$="/introduce"]');
    await intro.getByLabel('PINs (comma-separated)').fill(`${bob!.pin_code}, ${carol!.pin_code}`);
    await intro.getByLabel('Message').fill('Bob, meet Carol');
    await intro.getByRole('button', { name: 'Introduce' }).click();
    await page.getByRole('status').filter({ hasText: 'POST /introductions → 201' }).waitFor();
    await open(page, `/console/users/${bob!.id}`);
    await page.getByRole('button', { name: 'Accept request of Alice' }).click();
    await page.getByRole('status').filter({ hasText: '/accept → 200' }).waitFor();
    expect(await page.locator('[data-live="wallet"]').textContent()).toContain(`Contacts: Alice (${alice!.pin_code})`);
    await page.getByRole('button', { name: 'Accept introduction by Alice' }).click();
    await page.getByRole('status').filter({ hasText: '/accept → 200' }).waitFor();
    await open(page, `/console/users/${carol!.id}`);
    await page.getByRole('button', { name: 'Decline introduction by Alice' }).click();
    await page.getByRole('status').filter({ hasText: '/decline → 200' }).waitFor();
    expect(await page.getByRole('button', { name: /introduction by Alice/ }).count()).toBe(0);
    await page.close();
  });

  it(
    "dialogs: Alice's dialog with the shop shows on its page with the question; End " + 'ends it and it is gone',
    async () => {
      const [alice, shop] = ['Alice', 'Shop'].map((n) => findUser(server.store.read, n)!);
      const page = await context.newPage();
      watch(page);
      await open(page, `/console/users/${alice!.id}`);
      const send = page.locator('form[action$="/send-message"]');
      await send.getByLabel('To (PIN)').fill(shop!.pin_code);
      await send.getByLabel('Message').fill('order');
      await send.getByRole('button', { name: 'Send message' }).click();
      await page.getByRole('status').filter({ hasText: 'POST /messages/send → 201' }).waitFor();
      await open(page, '/console/bots/shop');
      const row = page.locator(`tr[data-dialog="${alice!.pin_code}"]`);
      await expect
        .poll(async () => {
          if (await row.count()) return true;
          await page.reload();
          return false;
        })
        .toBe(true);
      expect(await row.textContent()).toMatch(/Alice \([A-Z0-9]{6}\)[\s\S]*order[\s\S]*What size\?/);
      await shot(page, 'bot-dialogs');
      await row.getByRole('button', { name: 'End' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `ended: Alice (${alice!.pin_code})` })
        .waitFor();
      expect(await page.locator('tr[data-dialog]').count()).toBe(0);
      expect(await page.locator('[data-live="dialogs"]').textContent()).toContain(
        'No one is in a dialog with shop now.',
      );
      await page.close();
    },
  );

  it('no API key appears in any page, URL, cookie or browser storage', async () => {
    const keysDir = join(tmp.dir, 'data', 'console', 'keys');
    const keys = readdirSync(keysDir).map(
      (f) => (JSON.parse(readFileSync(join(keysDir, f), 'utf8')) as { api_key: string }).api_key,
    );
    expect(keys.length).toBeGreaterThanOrEqual(4); // Bob, Mallory, Alice, Carol
    const page = await context.newPage();
    await open(page, '/console/users');
    const storage = await page.evaluate(() =>
      JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie }),
    );
    const cookies = JSON.stringify(await context.cookies());
    const all = [...seen, storage, cookies].join('\n');
    expect(seen.length).toBeGreaterThan(20);
    for (const k of keys) expect(all).not.toContain(k);
    expect(all).not.toMatch(/pinbot_[A-Za-z0-9_-]{20,}/);
    await page.close();
  });
});
