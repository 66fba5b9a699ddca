import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import vm from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { callAdmin } from '../../src/admin/socket.js';
import { createRegistry } from '../../src/runtime/registry.js';
import { compileField } from '../../src/runtime/define/field-matcher.js';
import { compileRegex } from '../../src/runtime/define/regex.js';
import { loadBot } from '../../src/runtime/define/loader.js';
import type { ConditionFn } from '../../src/runtime/contract/types.js';
import { formatProblem } from '../../src/util/yaml-errors.js';
import { tempDir } from '../helpers/api.js';
import { eventually } from '../helpers/serve-child.js';
import { serve, type Child } from '../helpers/spawn.js';

// The attack of issue 13 item 7: a backtracking engine takes exponential time on this pattern
// when the text almost matches (32 characters: 7.8 s; 10,000: forever).
const EVIL = '^([A-Za-z]+\\s?)*$';
const evilText = (n: number) => `${'a'.repeat(n - 1)}!`;

const registry = createRegistry();
const problems = (text: string) => loadBot('bot.yaml', text, { registry, env: {} }).problems.map(formatProblem);
const matcherBot = (pattern: string, flags = '') =>
  `name: t\nas: alice\nrules:\n  - on: message.received\n    if: { content: { ` +
  `matches: ${JSON.stringify(pattern)}${flags ? `, flags: ${flags}` : ''} } }\n    ` +
  `do: [{ reply: hi }]\n`;
const run = (fn: ConditionFn, content: string) =>
  fn({ scope: { event: { content } } } as unknown as Parameters<ConditionFn>[0]);
/**
 * Runs `f` (whose matching is synchronous) under a watchdog that interrupts it: a backtracking
 * engine makes this throw "Script execution timed out" instead of hanging the test run. A
 * guard, not a timing assertion: linear matching of 10,000 characters takes milliseconds.
 */
const interruptible = <T>(f: () => T): T => vm.runInNewContext('f()', { f }, { timeout: 30_000 }) as T;

describe('matches: runs on a linear-time engine', () => {
  it('the backtracking attack pattern finishes on a 10,000-character message', async () => {
    const fn = compileField('content', { matches: EVIL });
    expect((await interruptible(() => run(fn, evilText(10_000)))).ok).toBe(false);
    expect((await run(fn, 'hello there world')).ok).toBe(true);
  });

  it('keeps the documented flags and JavaScript escapes', () => {
    expect(compileRegex('\\bhours\\b', 'i').test('Opening HOURS?')).toBe(true);
    expect(compileRegex('^b$', 'm').test('a\nb')).toBe(true);
    expect(compileRegex('^b$').test('a\nb')).toBe(false);
    expect(compileRegex('a.c', 's').test('a\nc')).toBe(true);
    expect(compileRegex('a.c').test('a\nc')).toBe(false);
    expect(compileRegex('^caf\\u00e9$', 'u').test('café')).toBe(true);
    expect(compileRegex('^\\u{1F600}$', 'u').test('😀')).toBe(true);
    expect(compileRegex('\\\\u00e9').test('\\u00e9')).toBe(true); // an escaped backslash stays one
    expect(compileRegex('^(?<word>\\w+)$').test('hello')).toBe(true);
  });

  it('the example bots still validate', () => {
    // bots/faq.yaml and bots/reminder.yaml use \\b, alternations and flags: i
    expect(problems(matcherBot('\\b(hours|open|close[sd]?)\\b', 'i'))).toEqual([]);
  });
});

describe('bots validate flags what the linear-time engine cannot run, with file:line:col and a hint', () => {
  it.each([
    [
      'a backreference',
      '(a)\\1',
      new RegExp(
        String.raw`^bot\.yaml:5:31: rules\.0\.if\.content\.matches: the pattern uses a ` +
          String.raw`backreference \(\\1\), which the linear-time regular expression engine ` +
          String.raw`cannot run — rewrite the pattern without it \(e\.g\. match both ` +
          String.raw`spellings with an alternation\), or test the text with a liquid: ` +
          String.raw`condition$`,
      ),
    ],
    ['a named backreference', '(?<x>a)\\k<x>', /^bot\.yaml:5:31: .*uses a named backreference/],
    ['a lookahead', 'foo(?=bar)', /^bot\.yaml:5:31: .*uses a lookahead/],
    ['a negative lookahead', '^(?!spam)', /^bot\.yaml:5:31: .*uses a negative lookahead/],
    ['a lookbehind', '(?<=\\$)\\d+', /^bot\.yaml:5:31: .*uses a lookbehind/],
    ['a negative lookbehind', '(?<!no )thanks', /^bot\.yaml:5:31: .*uses a negative lookbehind/],
    [
      'JavaScript-only syntax',
      '[^]',
      new RegExp(
        String.raw`^bot\.yaml:5:31: rules\.0\.if\.content\.matches: invalid regular ` +
          String.raw`expression: missing closing \].* — bots use RE2 syntax`,
      ),
    ],
    [
      'a syntax error',
      '(',
      /^bot\.yaml:5:31: rules\.0\.if\.content\.matches: invalid regular expression: missing closing \)/,
    ],
  ])('%s', (_what, pattern, expected) => {
    const got = problems(matcherBot(pattern));
    expect(
      got.some((p) => expected.test(p)),
      got.join('\n'),
    ).toBe(true);
  });

  it('an escaped paren starts no lookahead', () => {
    expect(problems(matcherBot('\\(?=x'))).toEqual([]);
  });
});

describe('a server with such a bot', { timeout: 90_000 }, () => {
  const tmp = tempDir('pinbot-regex-');
  let child: Child | undefined;
  afterAll(() => {
    if (child && child.proc.exitCode === null) child.proc.kill('SIGKILL');
    tmp.cleanup();
  });

  it('still answers /healthz while the bot handles the attack message', async () => {
    const data = join(tmp.dir, 'data');
    const bots = join(tmp.dir, 'bots');
    mkdirSync(bots, { recursive: true });
    writeFileSync(
      join(tmp.dir, 'config.yaml'),
      `rate_limits: { enabled: false }\nmessaging: { max_length: 10000 }\nbots: { dir: ${JSON.stringify(bots)} }\n`,
    );
    writeFileSync(
      join(bots, 'words.yaml'),
      `name: words\nas: Words\ncreate_user: true\npoll: 1s\nrules:\n  - id: ` +
        `words-only\n    on: message.received\n    if: { content: { matches: ` +
        `${JSON.stringify(EVIL)} } }\n    do: [{ reply: "only words" }]\n`,
    );
    let url: string;
    ({ child, url } = await serve(data, ['--config', join(tmp.dir, 'config.yaml')]));
    const alice = (await callAdmin(data, 'users.add', { name: 'Alice' })) as { api_key: string };
    const status = async () =>
      ((await callAdmin(data, 'bots.status')) as { bots: Array<{ name?: string; status?: string }> }).bots.find(
        (b) => b.name === 'words',
      );
    // running: its baseline is taken (the message wakes its first poll)
    await eventually(async () => (await status())?.status === 'running', 30_000, 'the bot to run');
    const { users } = (await callAdmin(data, 'users.list')) as {
      users: Array<{ display_name: string; pin_code: string }>;
    };
    const pin = users.find((u) => u.display_name === 'Words')!.pin_code;
    const sent = await fetch(`${url}/api/v1/messages/send`, {
      method: 'POST',
      headers: { 'X-API-Key': alice.api_key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ recipient_pin: pin, content: evilText(10_000) }),
    });
    expect(sent.status).toBe(201);
    // Until the bot has judged the message, /healthz must keep answering (a blocked event loop
    // would leave these requests unanswered and the fetch would abort).
    let answered = 0;
    const traces = await eventually(
      async () => {
        const health = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(20_000) });
        expect(await health.json()).toEqual({ status: 'ok' });
        answered++;
        const t = (await callAdmin(data, 'bots.trace', { name: 'words' }, 20_000)) as {
          traces: Array<{ reason?: string }>;
        };
        return t.traces.length ? t.traces : undefined;
      },
      60_000,
      'the bot to judge the message',
    );
    expect(answered).toBeGreaterThan(0);
    expect(traces.map((t) => t.reason)).toEqual(['condition_false']);
  });
});
