import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { coverageReport, type CoverageReport } from '../../src/scenario/coverage/report.js';
import { belowMinimum, parseCoverageMin } from '../../src/scenario/coverage/format.js';
import { loadAll, runAll } from '../../src/scenario/run-all.js';
import { tempDir } from '../helpers/api.js';
import { pinbot, ROOT } from '../helpers/spawn.js';

/**
 * Coverage on a fixture project whose gaps are known: the owner-jar bot has 4 rules (2 run,
 * 2 only triggered), one `choose` with 2 branches (the else never taken), and 3 step lines
 * never exercised; the scenario calls POST /wallet/send (201 ×3, 404 user_not_found ×1) and
 * POST /messages/send, and never GET /me.
 */
const FIXTURE = join(ROOT, 'test/fixtures/confidence');
const CHROMIUM = process.env.PINBOT_CHROMIUM ?? '/usr/bin/chromium';
const tmp = tempDir('pinbot-coverage-');
afterAll(() => tmp.cleanup());

async function report(): Promise<CoverageReport> {
  const { scenarios, problems } = await loadAll([join(FIXTURE, 'scenarios/owner.yaml')]);
  expect(problems).toEqual([]);
  const { results } = await runAll(scenarios, { parallel: 1, coverage: true });
  expect(results[0]!.status).toBe('passed');
  return coverageReport(scenarios, results, FIXTURE);
}

describe('scenario coverage', () => {
  it('counts operations × statuses and codes, rules × triggered/ran/why not, branches, ' +
    'and lines never exercised', async () => {
    const r = await report();
    const op = (name: string) => r.api.operations.find((o) => o.operation === name)!;
    expect(r.api.operations).toHaveLength(r.totals.operations.total);
    expect(op('POST /wallet/send')).toMatchObject({
      calls: 4,
      by_steps: 4,
      statuses: { 201: 3, 404: 1 },
      codes: { user_not_found: 1 },
      undocumented: [],
    });
    expect(op('POST /wallet/send').never_produced).toEqual(['400', '401', '409', '413', '429', '500', '503']);
    expect(op('POST /messages/send')).toMatchObject({ by_steps: 1, statuses: { 201: expect.any(Number) } });
    // the jar accepted alice's tip and declined bob's: the bot's calls count too, not as steps
    expect(op('POST /wallet/transactions/{id}/accept')).toMatchObject({ calls: 1, by_steps: 0 });
    expect(op('GET /me')).toMatchObject({ calls: 0, statuses: {} });
    expect(r.totals.rules).toEqual({ covered: 2, total: 4, percent: 50 });
    expect(r.totals.outcomes).toEqual({ covered: 1, total: 2, percent: 50 });
    const bot = r.bots[0]!;
    expect(bot).toMatchObject({ name: 'owner-jar', file: 'bots/owner-jar.yaml' });
    expect(bot.rules).toEqual([
      { id: 'owner-tips', where: 'bots/owner-jar.yaml:9', triggered: 3, ran: 1, not_run: { condition_false: 2 } },
      { id: 'strangers', where: 'bots/owner-jar.yaml:23', triggered: 3, ran: 1, not_run: { condition_false: 2 } },
      { id: 'status', where: 'bots/owner-jar.yaml:31', triggered: 1, ran: 0, not_run: { condition_false: 1 } },
      { id: 'never', where: 'bots/owner-jar.yaml:38', triggered: 1, ran: 0, not_run: { condition_false: 1 } },
    ]);
    expect(bot.outcomes).toEqual([
      { rule: 'owner-tips', step: 1, action: 'choose', outcome: 'branch 1', where: 'bots/owner-jar.yaml:17', taken: 1 },
      { rule: 'owner-tips', step: 1, action: 'choose', outcome: 'else', where: 'bots/owner-jar.yaml:20', taken: 0 },
    ]);
    expect(bot.lines.missed).toEqual([
      { where: 'bots/owner-jar.yaml:21', text: '- reply: "Thanks, owner."' },
      { where: 'bots/owner-jar.yaml:36', text: '- reply: "cap {{ vars.cap }}"' },
      { where: 'bots/owner-jar.yaml:43', text: '- reply: "you found it"' },
    ]);
    expect(bot.lines.total - bot.lines.covered).toBe(3);
    expect(belowMinimum(r, parseCoverageMin(['rules=60', '20']))).toEqual([
      'bot rules that ran: 50% is below --coverage-min rules=60',
    ]);
    expect(belowMinimum(r, parseCoverageMin(['50']))).toEqual([
      'API operations called: ' + r.totals.operations.percent + '% is below --coverage-min operations=50',
    ]);
    expect(() => parseCoverageMin(['rulez=5'])).toThrow(
      /MEASURE one of api, operations, rules, branches, outcomes, lines/,
    );
  }, 60_000);

  it('the CLI writes the summary, the JSON and one HTML page; --coverage-min below the ' +
    'numbers exits 1; a browser shows the page', async () => {
    const html = join(tmp.dir, 'reports/coverage.html');
    const json = join(tmp.dir, 'reports/coverage.json');
    const r = await pinbot([
      'scenario',
      'run',
      join(FIXTURE, 'scenarios/owner.yaml'),
      '--coverage',
      html,
      '--coverage',
      json,
      '--coverage-min',
      'rules=60',
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('✓ passed 11 steps');
    expect(r.stdout).toMatch(/bot rules that ran +2 of 4 \(50%\)/);
    expect(r.stdout).toMatch(/✗ choose of rule owner-tips \(step 1\): else never taken {2}.*owner-jar\.yaml:20/);
    expect(r.stdout).toMatch(/lines never exercised: .*owner-jar\.yaml:21, 36, 43/);
    expect(r.stderr).toContain('coverage below the minimum: bot rules that ran: 50% is below --coverage-min rules=60');
    expect(JSON.parse(readFileSync(json, 'utf8')).totals.rules).toEqual({ covered: 2, total: 4, percent: 50 });
    const page = readFileSync(html, 'utf8');
    expect(page).not.toMatch(/<(script|link)\b|src=|url\(/i); // one file: no scripts, no external assets
    const bad = await pinbot([
      'scenario',
      'run',
      join(FIXTURE, 'scenarios/owner.yaml'),
      '--coverage',
      join(tmp.dir, 'x.txt'),
    ]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('expected a file ending .html (the page) or .json (the data)');

    if (process.env.PINBOT_SKIP_BROWSER === '1') return;
    if (!existsSync(CHROMIUM))
      throw new Error(`no browser at ${CHROMIUM}: install Debian's chromium, or set PINBOT_SKIP_BROWSER=1`);
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    try {
      const p = await browser.newPage();
      const requests: string[] = [];
      p.on('request', (q) => requests.push(q.url()));
      await p.goto(`file://${html}`);
      expect(await p.locator('#total-rules').innerText()).toMatch(/bot rules that ran\s+50% · 2 of 4/);
      expect(await p.locator('#total-outcomes').innerText()).toMatch(/50% · 1 of 2/);
      const row = p.locator('#operations tr', { hasText: 'POST /wallet/send' });
      expect(await row.innerText()).toMatch(
        /POST \/wallet\/send\s+4\s+4\s+201 ×3, 404 ×1\s+user_not_found ×1\s+400 401 409 413 429 500 503/,
      );
      expect(await p.locator('#operations tr.miss', { hasText: 'GET /me' }).count()).toBe(1);
      expect((await p.locator('ul.missed li').allInnerTexts()).map((t) => t.split(' ')[0])).toEqual(
        [21, 36, 43].map((l) => `test/fixtures/confidence/bots/owner-jar.yaml:${l}`),
      );
      expect(requests).toEqual([`file://${html}`]);
    } finally {
      await browser.close();
    }
  }, 90_000);
});
