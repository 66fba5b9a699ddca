import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/client.js';
import type { VirtualClock } from '../../src/clock/virtual-clock.js';
import { configFrom } from '../../src/config/load.js';
import { consoleService } from '../../src/console/service.js';
import type { Trace } from '../../src/runtime/index.js';
import { scenarioPort } from '../../src/scenario/console-port.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { defaultServices } from '../../src/services/index.js';
import { tempDir } from '../helpers/api.js';
import { launchChromium, SKIP_BROWSER } from '../helpers/browser.js';
import { eventually } from '../helpers/serve-child.js';

/**
 * What if? and Make a scenario in a real browser (issue 32 items 1 and 2): the operator edits the
 * tip jar's cap on disk, clicks What if? on its page and reads which recorded decision changes;
 * Make a scenario on a run downloads its YAML. PINBOT_SCREENSHOTS=docs/console writes what-if.png.
 */
const ROOT = join(import.meta.dirname, '../..');
const SHOTS = process.env.PINBOT_SCREENSHOTS;
const TIP_JAR = readFileSync(join(ROOT, 'bots/tip-jar.yaml'), 'utf8');

let tmp: { dir: string; cleanup: () => void };
let server: RunningServer;
let browser: Browser;
let tipIds: string[] = [];

describe.skipIf(SKIP_BROWSER)('What if? and Make a scenario in a browser', () => {
  beforeAll(async () => {
    tmp = tempDir('pinbot-console-what-if-browser-');
    for (const d of ['bots', 'scenarios']) mkdirSync(join(tmp.dir, d));
    writeFileSync(join(tmp.dir, 'bots/tip-jar.yaml'), TIP_JAR);
    server = await startServer({
      dataDir: join(tmp.dir, 'data'),
      config: configFrom({ bots: { dir: join(tmp.dir, 'bots') }, rate_limits: { enabled: false } }),
      host: '127.0.0.1',
      port: 0,
      virtualClock: Date.parse('2026-11-21T12:00:00Z'),
      log: pino({ level: process.env.TEST_LOG ?? 'silent' }),
      services: [...defaultServices(), consoleService({ scenarios: scenarioPort(join(tmp.dir, 'scenarios')) })],
    });
    const jar = await eventually(
      async () => {
        const { bots } = (await server.command!('bots.status')) as {
          bots: Array<{ name?: string; status: string; message?: string }>;
        };
        return bots.find((b) => b.name === 'tip-jar' && b.status === 'running');
      },
      15_000,
      'the tip jar to run',
    );
    const pin = /\(([A-Z0-9]{6})\)/.exec(jar.message ?? '')![1]!;
    const { api_key } = (await server.command!('users.add', { name: 'Bob', balance: '20' })) as { api_key: string };
    const bob = createClient({ baseUrl: server.url, apiKey: api_key });
    for (const amount of [3, 7]) {
      tipIds.push((await bob.wallet.send({ recipient_pin: pin, amount })).transaction.id);
      await (server.clock as VirtualClock).settle();
    }
    await eventually(
      async () => {
        const { traces } = (await server.command!('bots.trace', { name: 'tip-jar' })) as { traces: Trace[] };
        return traces.length === 4 || undefined;
      },
      15_000,
      'four traces',
    );
    ({ browser } = await launchChromium());
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    tmp?.cleanup();
    tipIds = [];
  });

  it('shows the decisions an edit on disk changes, and downloads a run as a scenario', async () => {
    const context = await browser.newContext({ viewport: { width: 1000, height: 900 }, acceptDownloads: true });
    context.setDefaultTimeout(15_000);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (m) => void (m.type() === 'error' && !/status of 404/.test(m.text()) && errors.push(m.text())));
    // nothing of the console's is missing (a browser asks for /favicon.ico on its own)
    page.on('response', (r) => void (r.status() === 404 && !r.url().endsWith('/favicon.ico') && errors.push(r.url())));
    await page.goto(((await server.command!('console.link')) as { url: string }).url);
    const origin = new URL(page.url()).origin;
    await page.goto(`${origin}/console/bots/tip-jar`);

    await page.getByRole('button', { name: 'What if?' }).click();
    await page.waitForURL(/\/console\/bots\/tip-jar\/what-if$/);
    expect(await page.getByRole('status').filter({ hasText: 'this edit changes' }).textContent()).toBe(
      'this edit changes 0 of the last 2 decisions of tip-jar',
    );

    // the cap lowered to 5 on disk: the 7 is the one decision that changes
    writeFileSync(
      join(tmp.dir, 'bots/tip-jar.yaml'),
      TIP_JAR.replace('amount: { max: 10 }', 'amount: { max: 5 }').replace(
        'amount: { min: 10.01 }',
        'amount: { min: 5.01 }',
      ),
    );
    await page.getByRole('button', { name: 'What if?' }).click();
    await page.waitForLoadState();
    const summary = page.getByRole('status').filter({ hasText: 'this edit changes' });
    await expect.poll(() => summary.textContent()).toBe('this edit changes 1 of the last 2 decisions of tip-jar');
    const changed = page.locator(`li[data-event="transfer.received:${tipIds[1]}"]`);
    expect(await changed.getAttribute('data-status')).toBe('changed');
    expect(await changed.locator('.changes li').allTextContents()).toEqual([
      'rule thank-small-tips no longer runs: condition_false — amount max 5 (amount = 7)',
      'rule refuse-large-tips now runs (amount min 5.01 (amount = 7)); before: ' +
        'condition_false — amount min 10.01 (amount = 7) → steps: decline, reply "That ' +
        'is very generous, Bob, but this jar only takes tips up to 10. Your 7 is on its ' +
        'way back."',
    ]);
    // the decision that stays the same is folded away
    expect(await page.locator(`li[data-event="transfer.received:${tipIds[0]}"]`).isVisible()).toBe(false);
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'what-if.png'), fullPage: true });

    await page.getByRole('link', { name: 'Back to tip-jar' }).click();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page
        .locator(`li.run[data-rule="thank-small-tips"]`)
        .filter({ hasText: 'transfer.received 3' })
        .getByRole('link', { name: 'Make a scenario' })
        .click(),
    ]);
    expect(download.suggestedFilename()).toBe(`tip-jar-${tipIds[0]}.yaml`);
    const yaml = readFileSync((await download.path())!, 'utf8');
    expect(yaml).toContain('request: POST /wallet/send');
    expect(yaml).toContain('content: Thank you Bob for the tip of 3!');
    expect(errors).toEqual([]); // the page's CSP refused nothing it needs
    await context.close();
  }, 120_000);
});
