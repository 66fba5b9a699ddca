import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/api.js';
import { pinbot, spawnNode } from '../helpers/spawn.js';

const tmp = tempDir('pinbot-scenario-cli-');
afterAll(() => tmp.cleanup());

function dir(name: string, files: Record<string, string>): string {
  const d = join(tmp.dir, name);
  mkdirSync(d, { recursive: true });
  for (const [f, t] of Object.entries(files)) writeFileSync(join(d, f), t);
  return d;
}

const ok =
  'name: fine\nusers: { alice: { balance: 2 } }\nsteps:\n  - as: alice\n    request: ' +
  'GET /wallet/balance\n    expect: { body: { balance: 2 } }\n';
const broken =
  'name: broken\nusers: { alice: { balance: 2 } }\nsteps:\n  - as: alice\n    ' +
  'request: GET /wallet/balance\n    expect: { body: { balance: 3 } }\n  - clock: { ' +
  'advance: 1d }\n';

describe('pinbot scenario', { timeout: 60_000 }, () => {
  it.concurrent(
    'run: a readable console report, JUnit and TAP files, exit 1 on a failure with a ' + 'diff and a curl line',
    async () => {
      const d = dir('mixed', { 'a.yaml': ok, 'b.yaml': broken });
      const xml = join(tmp.dir, 'reports/r.xml');
      const r = await pinbot([
        'scenario',
        'run',
        d,
        '--parallel',
        '1',
        '--reporter',
        'junit',
        '--output',
        xml,
        '--reporter',
        `tap=${join(tmp.dir, 'r.tap')}`,
      ]);
      expect(r.code).toBe(1);
      expect(r.stdout).toContain('fine ');
      expect(r.stdout).toMatch(/✓ 1 alice GET \/wallet\/balance {2}200 · \d+ ms/);
      expect(r.stdout).toMatch(
        new RegExp(
          String.raw`✗ 1 alice GET \/wallet\/balance {2}\d+ ms\n {6}GET \/wallet\/balance ` +
            String.raw`answered 200; 1 expectation failed\n {6}body\.balance\n {8}- ` +
            String.raw`expected 3\n {8}\+ actual {3}2\n`,
        ),
      );
      expect(r.stdout).toMatch(/at .*b\.yaml:4:5 · scenario clock 2026-01-01T09:00:00\.000Z · seed \d+/);
      expect(r.stdout).toContain(
        `reproduce (keys masked; this server stopped with the scenario — run with --keep to keep a failed one up): curl -sS -X GET 'http://127.0.0.1:`,
      );
      expect(r.stdout).toContain('- 2 clock advance 1d  skipped');
      expect(r.stdout).toMatch(/2 scenarios: 1 passed, 1 failed/);
      expect(r.stdout + r.stderr).not.toMatch(/pinbot_[\w-]{20}/);
      const junit = readFileSync(xml, 'utf8');
      expect(junit).toMatch(
        new RegExp(
          String.raw`^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuites name="pinbot ` +
            String.raw`scenarios" tests="3" failures="1" errors="0" skipped="1">`,
        ),
      );
      expect(junit.match(/<testsuite /g)).toHaveLength(2);
      expect(junit).toMatch(
        new RegExp(
          String.raw`<failure message="GET \/wallet\/balance answered 200; 1 expectation ` +
            String.raw`failed" type="ScenarioStepFailure"><!\[CDATA\[[^]*curl ` +
            String.raw`-sS[^]*\]\]><\/failure>`,
        ),
      );
      expect(junit.trim().endsWith('</testsuites>')).toBe(true);
      expect(readFileSync(join(tmp.dir, 'r.tap'), 'utf8')).toMatch(/^TAP version 14\n1\.\.2\n/);
    },
  );

  it.concurrent(
    '--junit (what people try first) names the --reporter to write; a bad argument is ' + 'one line, no stack',
    async () => {
      const d = dir('junit-flag', { 'a.yaml': ok });
      const r = await pinbot(['scenario', 'run', d, '--junit']);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        'pinbot: --junit is not an option: write --reporter junit=reports/scenarios.xml ' +
          'for a junit report in a file (or --reporter junit for stdout)\n',
      );
      expect((await pinbot(['scenario', 'run', d, '--tap', 'r.tap'])).stderr).toContain(
        'write --reporter tap=r.tap for a tap report',
      );
      const s = await pinbot(['scenario', 'run', d, '--server', 'http://127.0.0.1:9']);
      expect(s.code).toBe(1);
      expect(s.stderr).toBe('pinbot: --server and --keys go together: --server URL --keys keys.yaml\n');
    },
  );

  it.concurrent('invalid files: every problem with file:line:col, nothing runs, exit 2', async () => {
    const d = dir('invalid', {
      'a.yaml': ok,
      'b.yaml': 'name: x\nusers: { alice: {} }\nsteps:\n  - as: alise\n    request: GET /me\n  - reqest: GET /me\n',
    });
    const xml = join(tmp.dir, 'never.xml');
    const r = await pinbot(['scenario', 'run', d, '--reporter', 'junit', '--output', xml]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/b\.yaml:4:9: steps\.0\.as: unknown user "alise" — did you mean "alice"\?/);
    expect(r.stderr).toMatch(/b\.yaml:6:5: steps\.1\.reqest: unknown key "reqest" — did you mean "request"\?/);
    expect(r.stderr).toContain('nothing ran: 2 problems in the files above');
    expect(existsSync(xml)).toBe(false);
    const v = await pinbot(['scenario', 'validate', d]);
    expect(v.code).toBe(2);
    expect(v.stderr).toContain('2 problems in 1 of 2 files');
  });

  it.concurrent(
    '--parallel 2 runs in two worker processes; a JSON report on stdout moves the ' +
      'console report to stderr; --bail',
    async () => {
      const d = dir('parallel', { 'a.yaml': ok, 'b.yaml': broken, 'c.yaml': ok.replace('fine', 'also fine') });
      const r = await pinbot(['scenario', 'run', d, '--parallel', '2', '--reporter', 'json']);
      expect(r.code).toBe(1);
      const report = JSON.parse(r.stdout);
      expect(report.summary).toMatchObject({ total: 3, passed: 2, failed: 1, parallel: 2 });
      expect(report.scenarios.map((s: { name: string }) => s.name)).toEqual(['fine', 'broken', 'also fine']);
      expect(report.scenarios[1].steps[0].diff).toBe('  body.balance\n    - expected 3\n    + actual   2');
      // each scenario is one block in the console report, never interleaved
      expect(r.stderr).toMatch(
        new RegExp(
          String.raw`broken .*b\.yaml\n  ✗ 1 alice GET \/wallet\/balance .*\n(.*\n){6}  - ` +
            String.raw`2 clock advance 1d  skipped\n  ✗ failed 2 steps`,
        ),
      );
      // one at a time, so what --bail leaves out does not depend on which worker is faster
      const bail = await pinbot([
        'scenario',
        'run',
        join(d, 'b.yaml'),
        join(d, 'a.yaml'),
        join(d, 'c.yaml'),
        '--parallel',
        '1',
        '--bail',
        '--quiet',
        '--reporter',
        'json',
      ]);
      expect(JSON.parse(bail.stdout).summary.total).toBe(1);
    },
  );

  it.concurrent(
    '--tag or --grep that selects nothing: a clear message naming the tags that exist, ' + 'nothing runs, exit 2',
    async () => {
      const d = dir('tagged', { 'a.yaml': ok.replace('name: fine', 'name: fine\ntags: [wallet, smoke]') });
      const xml = join(tmp.dir, 'none-selected.xml');
      const tag = await pinbot(['scenario', 'run', d, '--tag', 'walet', '--reporter', 'junit', '--output', xml]);
      expect(tag.code).toBe(2);
      expect(tag.stdout).toBe('');
      expect(tag.stderr).toBe(
        'nothing ran: no scenario matches --tag walet (1 scenario in the files given)\n ' +
          ' --tag walet: no scenario has this tag; did you mean "wallet"?\n',
      );
      expect(existsSync(xml)).toBe(false);
      const grep = await pinbot(['scenario', 'run', d, '--grep', '^nope']);
      expect(grep.code).toBe(2);
      expect(grep.stderr).toBe(
        'nothing ran: no scenario matches --grep "^nope" (1 scenario in the files ' +
          'given)\n  --grep matches scenario names (name:, or the file name), e.g. ' +
          '"fine"\n',
      );
    },
  );

  it.concurrent(
    "--keep leaves the failed scenario's server and data up until Ctrl-C; its curl line " + 'then answers',
    async () => {
      const d = dir('keep', { 'b.yaml': broken });
      const child = spawnNode(['bin/pinbot.js', 'scenario', 'run', d, '--keep']);
      try {
        const m = await child.waitFor(
          /server (http:\/\/127\.0\.0\.1:\d+)\n {4}data {3}(\S+)\n {4}keys {3}source (\S+)/,
        );
        const [, url, data, keysFile] = m;
        expect(child.stdout()).toContain(
          'reproduce on the kept server (keys masked: source the keys file below): curl -sS -X GET',
        );
        expect(existsSync(data!)).toBe(true);
        // the curl line of the failure, with the key from the keys file: the server answers
        const key = /PINBOT_KEY_ALICE='([^']+)'/.exec(readFileSync(keysFile!, 'utf8'))![1]!;
        const answer = await fetch(`${url}/api/v1/wallet/balance`, { headers: { 'X-API-Key': key } });
        expect(answer.status).toBe(200);
        expect(await answer.json()).toMatchObject({ balance: 2 });
        child.proc.kill('SIGINT');
        const { code } = await child.exited;
        expect(code).toBe(1); // the scenario failed
        expect(existsSync(data!)).toBe(false);
        await expect(fetch(`${url}/healthz`)).rejects.toThrow();
      } finally {
        child.proc.kill('SIGKILL');
      }
    },
  );

  it('--keep: the kept server answers the bots commands a serve answers, at the exact lines it prints', async () => {
    const jar = `name: jar fails
users: { alice: { balance: 5 }, jar: {} }
bots:
  - { name: jar, as: jar, vars: { cap: 4 }, rules: [{ id: thank, on: transfer.received, do: [accept, { reply: "thanks" }] }] }
steps:
  - as: alice
    request: POST /wallet/send
    body: { recipient_pin: "{{ users.jar.pin_code }}", amount: 2 }
  - expect_event: { message: { from: jar, content: "never" }, within: 10s }
`;
    const d = dir('keep-bots', { 'j.yaml': jar });
    const child = spawnNode(['bin/pinbot.js', 'scenario', 'run', d, '--keep']);
    try {
      const [, trace, data] = await child.waitFor(
        / {4}trace {2}(pinbot bots trace jar --data (\S+))\n {4}bots {3}pinbot bots list --data \S+\n/,
      );
      const run = (line: string) => pinbot([...line.split(' ').slice(1)]);
      const traced = await run(trace!);
      expect(traced.stderr).toBe('');
      expect(traced.stdout).toMatch(/jar › thank {2}transfer\.received 2 from \S+ \(\w+\) {2}→ done/);
      const listed = await run(`pinbot bots list --data ${data}`);
      expect(listed.stdout).toMatch(/^jar +running +as /m);
      const vars = await run(`pinbot bots vars jar --data ${data} --json`);
      expect(JSON.parse(vars.stdout)).toEqual({ bot: 'jar', vars: { cap: 4 }, file_vars: { cap: 4 } });
      child.proc.kill('SIGINT');
      expect((await child.exited).code).toBe(1);
    } finally {
      child.proc.kill('SIGKILL');
    }
  });

  it.concurrent('without --keep, the curl line says that the server is gone', async () => {
    const d = dir('nokeep', { 'b.yaml': broken });
    const r = await pinbot(['scenario', 'run', d]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'reproduce (keys masked; this server stopped with the scenario — run with ' +
        '--keep to keep a failed one up): curl -sS',
    );
  });

  it.concurrent('validate: the shipped scenarios are valid', async () => {
    const r = await pinbot(['scenario', 'validate']);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^\d+ scenarios valid \(\d+ steps\)\n$/);
    expect(r.code).toBe(0);
  });
});
