import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { loadAll, scenarioFiles } from '../../src/scenario/run-all.js';
import { loadScenario } from '../../src/scenario/load.js';
import { builtinSteps } from '../../src/scenario/steps/index.js';
import { SCENARIO_SCHEMA_FILE, scenarioSchemaText } from '../../src/scenario/write-schema.js';
import { formatProblem } from '../../src/util/yaml-errors.js';
import { tempDir } from '../helpers/api.js';
import { ROOT } from '../helpers/spawn.js';

const tmp = tempDir('pinbot-scenario-validate-');
afterAll(() => tmp.cleanup());
const steps = builtinSteps();

/** Writes a scenario (and extra files) and returns its problems as text. */
async function problems(text: string, extra: Record<string, string> = {}, remote?: string[]): Promise<string[]> {
  const dir = join(tmp.dir, String(Math.random()).slice(2));
  mkdirSync(join(dir, 'fragments'), { recursive: true });
  for (const [f, t] of Object.entries(extra)) writeFileSync(join(dir, f), t);
  const file = join(dir, 's.yaml');
  writeFileSync(file, text);
  const r = await loadScenario(file, { steps, remote: remote ? { users: remote } : undefined });
  return r.problems.map((p) => formatProblem(p).replaceAll(dir, 'DIR'));
}

const head = 'name: t\nusers: { alice: {}, bob: {} }\nsteps:\n';

describe('scenario validation: bad input gets file:line:col, what was expected and a hint', () => {
  it.each([
    [
      'invalid YAML, at its cause',
      'name: t\nsteps: [\n',
      /^DIR\/s\.yaml:2:8: this \[ is never closed — add \] where the list ends/,
    ],
    [
      'an unknown step kind',
      `${head}  - reqest: GET /me\n`,
      /^DIR\/s\.yaml:4:5: steps\.0\.reqest: unknown key "reqest" — did you mean "request"\?$/,
    ],
    [
      'an unknown user in as:',
      `${head}  - as: alise\n    request: GET /me\n`,
      /^DIR\/s\.yaml:4:9: steps\.0\.as: unknown user "alise" — did you mean "alice"\?/,
    ],
    [
      'a template with an unknown capture',
      `${head}  - as: alice\n    request: GET /me\n    save: { me: id }\n  - as: ` +
        `alice\n    request: GET /contacts/check/{{ mee }}\n`,
      /^DIR\/s\.yaml:8:14: steps\.1\.request: unknown variable "mee" .* did you mean "me"\?/,
    ],
    [
      'a capture used before the step that saves it',
      `${head}  - as: alice\n    request: GET /contacts/check/{{ me }}\n  - as: ` +
        `alice\n    request: GET /me\n    save: { me: id }\n`,
      /^DIR\/s\.yaml:5:14: steps\.0\.request: unknown variable "me"/,
    ],
    [
      'an unknown user in a template',
      `${head}  - as: alice\n    request: GET /contacts/check/{{ users.carol.pin_code }}\n`,
      /^DIR\/s\.yaml:5:14: .*unknown user "carol"/,
    ],
    [
      'a $ref to a schema that does not exist',
      `${head}  - as: alice\n    request: GET /me\n    expect: { schema: { $ref: "#/components/schemas/Usr" } }\n`,
      new RegExp(
        String.raw`^DIR\/s\.yaml:6:\d+: steps\.0\.expect\.schema\.\$ref: no schema ` +
          String.raw`#\/components\/schemas\/Usr in the API's OpenAPI document — did you ` +
          String.raw`mean "User"\?`,
      ),
    ],
    [
      'a response schema of an unknown operation',
      `${head}  - as: alice\n    request: GET /me\n    expect: { schema: { response: GET /mee } }\n`,
      /no operation GET \/mee in the OpenAPI document — did you mean "GET \/me"\?/,
    ],
    [
      'an unknown key in a step',
      `${head}  - as: alice\n    request: GET /me\n    expects: { status: 200 }\n`,
      /^DIR\/s\.yaml:6:5: steps\.0\.expects: unknown key "expects" — did you mean "expect"\?/,
    ],
    [
      'a bad duration',
      `${head}  - clock: { advance: 2 days }\n`,
      /^DIR\/s\.yaml:4:23: steps\.0\.clock\.advance: expected a duration like/,
    ],
    [
      'an unknown event user',
      `${head}  - expect_event: { message: { to: carol }, within: 1s }\n`,
      /unknown user "carol"/,
    ],
    [
      'a bad regular expression',
      `${head}  - as: alice\n    request: GET /me\n    expect: { body: { id: { matches: "([" } } }\n`,
      /steps\.0\.expect\.body\.id\.matches: invalid regular expression/,
    ],
    [
      'a misspelt kind next to keys of that kind (as:)',
      `${head}  - as: alcie\n    reqest: GET /me\n`,
      /^DIR\/s\.yaml:5:5: steps\.0\.reqest: unknown key "reqest" — did you mean "request"\?$/,
    ],
    [
      'keys of a kind without the kind',
      `${head}  - as: alice\n    body: {}\n`,
      new RegExp(
        String.raw`^DIR\/s\.yaml:4:5: steps\.0: this step has no kind: "as", "body" are ` +
          String.raw`keys of a request or a say step — add "request:" to it$`,
      ),
    ],
    [
      'an unquoted path with brackets in a { } mapping: one problem, "quote the path"',
      `${head}  - as: alice\n    request: GET /wallet/transactions\n    save: { tx: ` +
        `transactions[0].id }\n  - log: "{{ tx }}"\n`,
      new RegExp(
        String.raw`^DIR\/s\.yaml:6:29: the "\[" in transactions\[0\]\.id is read as YAML ` +
          String.raw`syntax: inside \{ … \} a value with brackets must be quoted — quote ` +
          String.raw`the path: "transactions\[0\]\.id"$`,
      ),
    ],
    [
      'an alias bomb, refused at its first alias',
      `name: t\nvars:\n  a: &a [x, x, x, x, x, x, x, x, x, x]\n  b: &b [*a, *a, *a, ` +
        `*a, *a, *a, *a, *a, *a, *a]\n  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, ` +
        `*b]\n  d: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\nsteps: []\n`,
      /^DIR\/s\.yaml:4:10: the aliases \(\*name\) of this file expand to more than 100 copies: refused/,
    ],
    [
      'two kinds in one step',
      `${head}  - log: x\n    clock: { advance: 1s }\n`,
      /^DIR\/s\.yaml:4:5: steps\.0: a step has one kind; this one has log and clock — split it into two steps$/,
    ],
    [
      'an unknown top-level key',
      'name: t\nuser: {}\nsteps: []\n',
      /^DIR\/s\.yaml:2:1: user: unknown key "user" — did you mean "users"\?/,
    ],
    [
      'a bad config override',
      'name: t\nconfig: { ubi: { amount_per_day: lots } }\nsteps: []\n',
      /^DIR\/s\.yaml:2:34: config\.ubi\.amount_per_day: expected a number/,
    ],
    [
      'a plugin file that is not a plugin',
      'name: t\nplugins: [p.ts]\nsteps: []\n',
      /plugins: a plugin did not load: .*p\.ts: the module has no default export/,
    ],
  ])('%s', async (_what, text, re) => {
    const ps = await problems(text, { 'p.ts': '' });
    expect(
      ps.some((p) => re.test(p)),
      ps.join('\n'),
    ).toBe(true);
  });

  it("a YAML mistake is one problem at its cause, not the parser's cascade", async () => {
    const flow = await problems(
      `${head}  - as: alice\n    request: GET /wallet/transactions\n    save: { tx: ` +
        `transactions[0].id, n: transactions[1].id }\n  - log: "{{ tx }}"\n`,
    );
    expect(flow).toHaveLength(1);
    const other = await problems(`${head}  - log: [a\n  - log: b: c\n`);
    expect(other).toHaveLength(1);
    expect(other[0]).toMatch(/^DIR\/s\.yaml:\d+:\d+: /);
  });

  it('a fragment missing a parameter, an unknown parameter, and a missing fragment', async () => {
    const frag =
      'params: { to: {}, amount: { default: 1 } }\nsteps:\n  - as: alice\n    ' +
      'request: GET /contacts/check/{{ users[to].pin_code }}\n';
    const ps = await problems(
      `${head}  - use: fragments/f.yaml\n    with: { amont: 2 }\n  - use: fragments/nope.yaml\n`,
      { 'fragments/f.yaml': frag },
    );
    expect(ps).toEqual([
      'DIR/s.yaml:4:10: steps.0.use: fragment DIR/fragments/f.yaml needs the parameter "to" — add it: with: { to: … }',
      'DIR/s.yaml:5:13: steps.0.with.amont: fragment DIR/fragments/f.yaml has no ' +
        'parameter "amont" — did you mean "amount"?',
      'DIR/s.yaml:6:10: steps.1.use: cannot read the fragment ' +
        'DIR/fragments/nope.yaml: no such file — the path is relative to this file',
    ]);
  });

  it("problems inside a fragment point into the fragment, with the caller's literal parameters checked", async () => {
    const frag = 'params: [who]\nsteps:\n  - as: "{{ who }}"\n    request: GET /me\n  - reqest: x\n';
    const ps = await problems(`${head}  - use: fragments/f.yaml\n    with: { who: carol }\n`, {
      'fragments/f.yaml': frag,
    });
    expect(ps.map((p) => p.replace(/^.*fragments\//, 'fragments/'))).toEqual([
      'fragments/f.yaml:3:9: steps.0.as: unknown user "carol" — known users: alice, bob; declare users under users:',
      'fragments/f.yaml:5:5: steps.1.reqest: unknown key "reqest" — did you mean "request"?',
    ]);
  });

  it('an inline bot is checked with the bot validator, at its place in the scenario', async () => {
    const ps = await problems(
      'name: t\nusers: { jar: {} }\nbots:\n  - name: b\n    as: jar\n    rules: [{ ' +
        'on: transfer.received, do: [acept] }]\nsteps: []\n',
    );
    expect(ps.join('\n')).toMatch(/^DIR\/s\.yaml:\d+:\d+: .*acept/);
  });

  it('remote mode: clock steps, user set-up and bots need the embedded server; users need keys', async () => {
    const ps = await problems(
      'name: t\nusers: { alice: { balance: 3 }, bob: {} }\nsteps:\n  - clock: { ' +
        'advance: 1d }\n  - if: mode == "embedded"\n    restart: true\n',
      {},
      ['alice'],
    );
    expect(ps).toEqual([
      'DIR/s.yaml:2:19: users.alice.balance: users.alice.balance needs the embedded ' +
        "server (a remote server's users are set up by its operator) — remove it, or " +
        'run without --server',
      'DIR/s.yaml:2:33: users.bob: no API key for user "bob" in the keys file — add ' +
        '"bob: pinbot_…" to the file given with --keys',
      'DIR/s.yaml:4:5: steps.0.clock: step 1 (clock advance 1d): clock control needs ' +
        'the embedded server (a remote server runs on real time): run without --server, ' +
        'or wait with expect_event / eventually',
    ]);
  });

  it('nothing is loaded when any file is invalid: loadAll reports every file', async () => {
    const dir = join(tmp.dir, 'two');
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.yaml'), `${head}  - as: alice\n    request: GET /me\n`);
    writeFileSync(join(dir, 'b.yaml'), `${head}  - as: zed\n    request: GET /me\n`);
    const { files } = scenarioFiles([dir]);
    const r = await loadAll(files);
    expect(r.problems).toHaveLength(1);
    expect(r.scenarios.map((s) => s.name)).toEqual(['t']);
  });
});

describe('the published JSON Schema', () => {
  it('schemas/scenario.schema.json is up to date (run `npm run schemas`)', () => {
    expect(readFileSync(SCENARIO_SCHEMA_FILE, 'utf8')).toBe(scenarioSchemaText());
  });

  it(
    'accepts every shipped and suite scenario and fragment, as an editor would check ' + 'it, and names each step kind',
    () => {
      const schema = JSON.parse(readFileSync(SCENARIO_SCHEMA_FILE, 'utf8'));
      expect(
        Object.keys(schema.definitions)
          .filter((k) => k.startsWith('step_'))
          .map((k) => k.slice(5)),
      ).toEqual(steps.names());
      const validate = new Ajv({ strict: false }).compile(schema);
      const all = [
        ...scenarioFiles([join(ROOT, 'scenarios'), join(ROOT, 'test/scenarios/suite')]).files,
        join(ROOT, 'scenarios/fragments/ask.yaml'),
        join(ROOT, 'test/scenarios/suite/fragments/pay.yaml'),
      ];
      for (const f of all) {
        const text = readFileSync(f, 'utf8');
        expect(text.split('\n')[0], f).toMatch(
          /^# yaml-language-server: \$schema=(\.\.\/)+schemas\/scenario\.schema\.json$/,
        );
        expect(validate(parse(text)), `${f}: ${JSON.stringify(validate.errors?.slice(0, 3))}`).toBe(true);
      }
      expect(validate(parse('steps: [{ reqest: GET /me }]'))).toBe(false);
      expect(validate(parse('steps: [{ request: GET /me, within: 1s }]'))).toBe(false);
    },
  );
});
