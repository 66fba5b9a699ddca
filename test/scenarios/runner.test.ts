import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { configFrom } from '../../src/config/load.js';
import { createKey } from '../../src/domain/users/keys.js';
import { createUser } from '../../src/domain/users/users.js';
import { loadAll, runAll, selectScenarios } from '../../src/scenario/run-all.js';
import { writeScenarioYaml } from '../../src/console/recorder.js';
import { consoleReporter } from '../../src/scenario/reporters/console.js';
import { tapText } from '../../src/scenario/reporters/tap.js';
import { startServer } from '../../src/server.js';
import { tempDir } from '../helpers/api.js';
import { ROOT } from '../helpers/spawn.js';

const tmp = tempDir('pinbot-scenario-runner-');
afterAll(() => tmp.cleanup());

let n = 0;
function write(text: string, name = `s${++n}.yaml`): string {
  const file = join(tmp.dir, name);
  writeFileSync(file, text);
  return file;
}

async function run(texts: string[], o: Parameters<typeof runAll>[1] = {}) {
  const { scenarios, problems } = await loadAll(
    texts.map((t) => write(t)),
    { remoteUsers: o.remote ? Object.keys(o.remote.keys) : undefined },
  );
  expect(problems).toEqual([]);
  return runAll(scenarios, { parallel: 1, ...o });
}

const tipJar = `users: { alice: { balance: 10 }, jar: {} }
bots:
  - name: jar
    as: jar
    rules: [{ on: transfer.received, do: [accept, { reply: "Thanks!" }] }]
`;

describe('running scenarios', () => {
  it(
    'a failed request shows the diff, where, the clock, the seed and a curl line with ' +
      'the key masked; later steps are skipped',
    async () => {
      const { results } = await run([
        `name: broken\nseed: 42\nusers: { alice: { balance: 3 } }\nsteps:\n  - as: ` +
          `alice\n    request: GET /wallet/balance\n    expect: { body: { balance: 4 } ` +
          `}\n  - log: never\n`,
      ]);
      const [r] = results;
      expect(r!.status).toBe('failed');
      const [s1, s2] = r!.steps;
      expect(s1).toMatchObject({
        status: 'failed',
        error: 'GET /wallet/balance answered 200; 1 expectation failed',
        diff: '  body.balance\n    - expected 4\n    + actual   3',
        clock: '2026-01-01T09:00:00.000Z',
      });
      expect(s1!.where).toMatch(/s\d+\.yaml:5:5$/);
      expect(s1!.curl).toMatch(
        /^curl -sS -X GET 'http:\/\/127\.0\.0\.1:\d+\/api\/v1\/wallet\/balance' -H "X-API-Key: \$PINBOT_KEY_ALICE"$/,
      );
      expect(s2).toMatchObject({ status: 'skipped', label: 'log' });
      const out: string[] = [];
      const rep = consoleReporter({ out: { write: (s: string) => out.push(s) }, parallel: 2, color: false });
      rep.scenarioEnd!(r!);
      expect(out.join('')).toContain('seed 42');
      expect(out.join('')).not.toMatch(/pinbot_[\w-]{20}/);
      expect(tapText(results)).toMatch(/^not ok 1 - broken$/m);
    },
  );

  it(
    'expect_event waits on the virtual clock and stops at the event; a missing one ' + 'shows the closest event',
    async () => {
      const { results } = await run([
        `${tipJar}steps:
  - as: alice
    request: POST /wallet/send
    body: { recipient_pin: "{{ users.jar.pin_code }}", amount: 2 }
  - expect_event: { message: { to: alice, from: jar, content: "Thanks!" }, within: 1m }
  - assert: now == "2026-01-01T09:00:00.000Z"
  - expect_event: { message: { to: alice, content: "Thanks!" }, within: 1m }
`,
      ]);
      const steps = results[0]!.steps;
      expect(steps.map((s) => s.status)).toEqual(['passed', 'passed', 'passed', 'failed']);
      // each event is matched once: the second expect_event waited its full minute
      expect(steps[3]).toMatchObject({
        error: 'no message matching {"to":"alice","content":"Thanks!"} within 1m',
        clock: '2026-01-01T09:01:00.000Z',
      });
      expect(steps[3]!.diff).toBe('  no message happened at all');
    },
  );

  it("an expect_event that times out because a bot's loop guard held back says so", async () => {
    // a scripted user answering the bot at once, round after round, looks like another bot:
    // eight chat turns, each a message to the echo bot and the wait for its answer
    const turns = Array.from(
      { length: 8 },
      (_, i) => `  - as: alice
    request: POST /messages/send
    body: { recipient_pin: "{{ users.echo.pin_code }}", content: "hi ${i + 1}" }
  - expect_event: { message: { from: echo, to: alice, content: "echo hi ${i + 1}" }, within: 10s }
`,
    ).join('');
    const { results } = await run([
      `users: { alice: {}, echo: {} }
bots:
  - { name: echo, as: echo, rules: [{ on: message.received, do: [{ reply: "echo {{ event.content }}" }] }] }
steps:
${turns}`,
    ]);
    const failed = results[0]!.steps.find((st) => st.status === 'failed')!;
    expect(failed.error).toMatch(/^no message matching .* within 10s$/);
    expect(failed.diff).toContain('bot echo › rule-1 did not run for message.received');
    expect(failed.diff).toContain('loop_suspected');
    expect(failed.diff).toContain('clock: { advance: 3s }');
  });

  it(
    'a failed expect_event shows the runs of the bots that failed or did not run ' + 'meanwhile, with their reasons',
    async () => {
      const { results } = await run([
        `users: { alice: { balance: 10 }, jar: {} }
bots:
  - name: jar
    as: jar
    rules:
      - { id: thank, on: transfer.received, do: [accept, { send_message: { to: ZZZZZZ, content: "thanks" } }] }
      - { id: big, on: transfer.received, if: { amount: { min: 5 } }, do: [{ reply: "wow" }] }
steps:
  - as: alice
    request: POST /wallet/send
    body: { recipient_pin: "{{ users.jar.pin_code }}", amount: 2 }
  - expect_event: { message: { from: jar }, within: 10s }
`,
      ]);
      const failed = results[0]!.steps[1]!;
      expect(failed.error).toBe('no message matching {"from":"jar"} within 10s');
      const lines = failed.diff!.split('\n');
      expect(lines.slice(0, 2)).toEqual([
        '  no message happened at all',
        "  the scenario's bots since step 1 started:",
      ]);
      expect(lines[2]).toMatch(
        new RegExp(
          String.raw`^ {2}bot jar › thank failed for transfer\.received 2 from alice ` +
            String.raw`\(\w+\): api — step 2 \(send_message\) failed: POST \/messages\/send ` +
            String.raw`→ 404 user_not_found`,
        ),
      );
      expect(lines[3]).toMatch(
        /^ {2}bot jar › big did not run for transfer\.received 2 from alice \(\w+\): condition_false/,
      );
      // every reporter shows the diff
      expect(tapText(results)).toContain('bot jar › thank failed');
    },
  );

  it('expect_none fails listing what happened', async () => {
    // the jar takes 5 s to accept (it is woken at once by the transfer: without the wait it
    // would accept before the step)
    const slowJar = tipJar.replace('do: [accept,', 'do: [{ wait: 5s }, accept,');
    const { results } = await run([
      `${slowJar}steps:\n  - as: alice\n    request: POST /wallet/send\n    body: { ` +
        `recipient_pin: "{{ users.jar.pin_code }}", amount: 2 }\n  - expect_none: { ` +
        `transfer: { to: jar, status: accepted }, within: 10s }\n`,
    ]);
    expect(results[0]!.steps[1]).toMatchObject({
      status: 'failed',
      error:
        'expected no transfer matching {"to":"jar","status":"accepted"} since step 1 ' +
        'started and within 10s after; 1 happened',
      diff: '  + transfer 2 alice → jar accepted',
    });
  });

  /** Alice sends nia 2; nia accepts and thanks her at once (the start of a scenario). */
  const NIA_THANKS = `users: { alice: { balance: 10 }, nia: {} }
bots:
  - { name: nia, as: nia, rules: [{ on: transfer.received, do: [accept, { reply: "thanks!" }] }] }
steps:
  - as: alice
    request: POST /wallet/send
    body: { recipient_pin: "{{ users.nia.pin_code }}", amount: 2 }
`;

  it(
    'expect_none sees what the step before it caused: a bot that answers while the ' + 'request settles is caught',
    async () => {
      const { results } = await run([
        `${NIA_THANKS}  - expect_none: { message: { from: nia }, within: 10m }
`,
      ]);
      // nia thanked alice at 09:00:00, while the request step settled: before expect_none started
      expect(results[0]!.steps[1]).toMatchObject({
        status: 'failed',
        error: 'expected no message matching {"from":"nia"} since step 1 started and within 10m after; 1 happened',
        diff: '  + message nia → alice "thanks!"',
      });
    },
  );

  it(
    'expect_none does not count what happened before the step before it, nor what an ' + 'expect_event matched',
    async () => {
      const { results } = await run([
        `${NIA_THANKS}  - as: alice
    request: GET /wallet/balance
  - name: the thanks came before the step before this one
    expect_none: { message: { from: nia }, within: 10m }
  - as: alice
    request: POST /wallet/send
    body: { recipient_pin: "{{ users.nia.pin_code }}", amount: 3 }
  - expect_event: { message: { from: nia, to: alice }, within: 10s }
  - name: exactly one thanks for the second tip
    expect_none: { message: { from: nia }, within: 10m }
`,
      ]);
      expect(results[0]!.steps.map((s) => s.status)).toEqual([
        'passed',
        'passed',
        'passed',
        'passed',
        'passed',
        'passed',
      ]);
    },
  );

  it(
    'expect_none after an expect_event looks back to the request, so a bot that answers ' + 'twice at once is caught',
    async () => {
      const twice = NIA_THANKS.replace('{ reply: "thanks!" }]', '{ reply: "thanks!" }, { reply: "thanks again!" }]');
      const { results } = await run([
        `${twice}  - expect_event: { message: { from: nia, to: alice }, within: 10s }
  - expect_none: { message: { from: nia }, within: 1h }
`,
      ]);
      // the first thanks is claimed by expect_event; the second came while the request settled
      expect(results[0]!.steps.map((s) => s.status)).toEqual(['passed', 'passed', 'failed']);
      expect(results[0]!.steps[2]).toMatchObject({
        error: 'expected no message matching {"from":"nia"} since step 1 started and within 1h after; 1 happened',
        diff: '  + message nia → alice "thanks again!"',
      });
    },
  );

  it('the shipped tip-jar-quiet scenario catches a tip jar that thanks twice', async () => {
    const project = join(tmp.dir, 'quiet');
    mkdirSync(join(project, 'bots'), { recursive: true });
    mkdirSync(join(project, 'scenarios'));
    writeFileSync(join(project, 'config.yaml'), '');
    const jar = readFileSync(join(ROOT, 'bots/tip-jar.yaml'), 'utf8');
    const thanks = /( {6}- reply: "Thank you[^\n]*\n)/;
    expect(jar).toMatch(thanks);
    writeFileSync(join(project, 'bots/tip-jar.yaml'), jar.replace(thanks, '$1$1'));
    const file = join(project, 'scenarios/tip-jar-quiet.yaml');
    writeFileSync(file, readFileSync(join(ROOT, 'scenarios/tip-jar-quiet.yaml'), 'utf8'));
    const { scenarios, problems } = await loadAll([file]);
    expect(problems).toEqual([]);
    const [r] = (await runAll(scenarios, { parallel: 1 })).results;
    const last = r!.steps.at(-1)!;
    expect(last).toMatchObject({ status: 'failed', label: expect.stringMatching(/^one thanks per tip/) });
    expect(last.error).toMatch(
      /^expected no message matching \{"from":"jar"\} since step 3 started and within 1h after; 1 happened$/,
    );
  });

  it(
    "a fragment's first expect_none looks back to the step before the use:, and a use: " +
      'is the step before the next one',
    async () => {
      write('params: [who]\nsteps:\n  - expect_none: { message: { from: "{{ who }}" }, within: 1m }\n', 'silence.yaml');
      write(
        'params: [to]\nsteps:\n  - as: alice\n    request: POST /wallet/send\n    body: ' +
          '{ recipient_pin: "{{ users[to].pin_code }}", amount: 1 }\n',
        'tip.yaml',
      );
      const head = `users: { alice: { balance: 10 }, nia: {} }
bots:
  - { name: nia, as: nia, rules: [{ on: transfer.received, do: [accept, { reply: "thanks!" }] }] }
steps:
`;
      const { results } = await run([
        `${head}  - as: alice\n    request: POST /wallet/send\n    body: { ` +
          `recipient_pin: "{{ users.nia.pin_code }}", amount: 2 }\n  - use: ` +
          `silence.yaml\n    with: { who: nia }\n`,
        `${head}  - use: tip.yaml\n    with: { to: nia }\n  - expect_none: { message: { from: nia }, within: 1m }\n`,
      ]);
      expect(results[0]!.steps[1]!.children![0]).toMatchObject({
        status: 'failed',
        error: 'expected no message matching {"from":"nia"} since step 1 started and within 1m after; 1 happened',
      });
      expect(results[1]!.steps[1]).toMatchObject({
        status: 'failed',
        error: 'expected no message matching {"from":"nia"} since step 1 started and within 1m after; 1 happened',
      });
    },
  );

  it('--bail starts nothing after a failure; --grep and --tag select', async () => {
    const bad = 'name: first\ntags: [a]\nsteps: [{ assert: "1 == 2" }]\n';
    const good = 'name: second\ntags: [b]\nsteps: [{ assert: "1 == 1" }]\n';
    expect((await run([bad, good], { bail: true })).results.map((r) => r.name)).toEqual(['first']);
    expect((await run([bad, good])).summary).toMatchObject({ total: 2, passed: 1, failed: 1 });
    const { scenarios } = await loadAll([write(bad), write(good)]);
    expect(selectScenarios(scenarios, { grep: /sec/ }).map((s) => s.name)).toEqual(['second']);
    expect(selectScenarios(scenarios, { tags: ['a'] }).map((s) => s.name)).toEqual(['first']);
  });

  it(
    'remote mode: real time, users from their keys, a guarded clock step skipped, ' + 'events through the API',
    async () => {
      const dataDir = join(tmp.dir, 'remote');
      mkdirSync(dataDir);
      const server = await startServer({
        dataDir,
        config: configFrom({}),
        host: '127.0.0.1',
        port: 0,
        log: pino({ level: 'silent' }),
        services: [],
      });
      try {
        const keys = await server.store.transaction((tx) => {
          const out: Record<string, string> = {};
          for (const name of ['alice', 'bob'])
            out[name] = createKey(tx, server.env, createUser(tx, server.env, { name }).id).api_key;
          return out;
        });
        const { results } = await run(
          [
            `users: { alice: {}, bob: {} }
steps:
  - as: alice
    request: POST /messages/send
    body: { recipient_pin: "{{ users.bob.pin_code }}", content: "hi {{ run_id }}" }
    expect: { status: 201 }
  - expect_event: { message: { to: bob, from: alice, content: { matches: "^hi " } }, within: 2s, every: 100ms }
  - if: mode == "embedded"
    clock: { advance: 1d }
  - as: bob
    request: GET /me
    expect: { body: { display_name: bob } }
`,
          ],
          { remote: { url: server.url, keys } },
        );
        expect(results[0]!.steps.map((s) => s.status)).toEqual(['passed', 'passed', 'skipped', 'passed']);
        expect(results[0]!.mode).toBe('remote');
      } finally {
        await server.close();
      }
    },
  );
});

describe('users named like Object.prototype members (round 4)', () => {
  it(
    'constructor, toString, hasOwnProperty and valueOf are users like any other, in a ' + 'recorded scenario’s shape',
    async () => {
      const names = ['constructor', 'toString', 'hasOwnProperty', 'valueOf'];
      const users = names.map((u) => `  ${JSON.stringify(u)}: { balance: 5 }`).join('\n');
      const steps = names
        .map(
          (u, i) => `  - as: ${JSON.stringify(u)}
    request: POST /wallet/send
    body: { recipient_pin: "{{ users.${names[(i + 1) % names.length]}.pin_code }}", amount: 1 }
    expect: { status: 201 }
  - as: ${JSON.stringify(u)}
    request: GET /me
    expect: { body: { display_name: ${JSON.stringify(u)} } }`,
        )
        .join('\n');
      const { results } = await run([`name: prototype names\nusers:\n${users}\nsteps:\n${steps}\n`]);
      expect(results[0]!.steps.map((s) => s.status)).toEqual(Array(names.length * 2).fill('passed'));
      expect([results[0]!.status, results[0]!.error]).toEqual(['passed', undefined]);
    },
  );

  it('a recording by users "constructor" and "__proto__" replays', async () => {
    const who = (name: string, pin: string) => ({
      id: `usr_${pin.toLowerCase()}00`,
      display_name: name,
      pin_code: pin,
    });
    const [a, b] = [who('constructor', 'AAAAA1'), who('__proto__', 'BBBBB2')];
    const yaml = writeScenarioYaml({
      name: 'proto replay',
      userByPin: (pin) => [a, b].find((u) => u.pin_code === pin),
      steps: [
        {
          kind: 'request',
          balanceBefore: 5,
          req: {
            user: a,
            method: 'POST',
            path: '/messages/send',
            body: { recipient_pin: b.pin_code, content: 'hi' },
            status: 201,
            answer: { content: 'hi' },
          },
        },
        {
          kind: 'request',
          balanceBefore: 5,
          req: { user: b, method: 'GET', path: '/wallet/balance', status: 200, answer: { balance: 5 } },
        },
      ],
    });
    const { results } = await run([yaml]);
    expect([results[0]!.status, results[0]!.error]).toEqual(['passed', undefined]);
    expect(results[0]!.steps.map((s) => s.status)).toEqual(['passed', 'passed']);
  });
});
