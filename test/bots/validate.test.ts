import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { validateFiles } from '../../src/cli/bots-commands.js';
import { createRegistry } from '../../src/runtime/registry.js';
import { loadBot } from '../../src/runtime/define/loader.js';
import { BOT_SCHEMA_FILE, botSchemaText } from '../../src/runtime/define/write-schema.js';
import { loadConfig } from '../../src/config/load.js';
import { pino } from 'pino';
import { buildRegistry } from '../../src/services/registry.js';
import { formatProblem } from '../../src/util/yaml-errors.js';
import { tempDir } from '../helpers/api.js';

const registry = createRegistry();
const problems = (text: string, env: NodeJS.ProcessEnv = {}) =>
  loadBot('bot.yaml', text, { registry, env }).problems.map(formatProblem);

const head = 'name: t\nas: alice\nrules:\n';

describe('bot files: every problem with file:line:col, what was expected and a hint', () => {
  it.each([
    [
      'a YAML syntax error (an unclosed list), at its cause',
      'name: t\nas: alice\nrules:\n  - on: [transfer.received\n',
      /^bot\.yaml:4:9: this \[ is never closed — add \] where the list ends/,
    ],
    [
      'an unclosed quote, at its cause rather than the end of the file',
      `${head}  - on: message.received\n    do:\n      - reply: "hello\n  - on: startup\n    do: [{ log: x }]\n`,
      /^bot\.yaml:6:16: this double-quoted text is never closed — add the closing " at the end of the text/,
    ],
    [
      'a colon inside an unquoted value',
      `${head}  - on: message.received\n    do:\n      - reply: Note: this\n`,
      /^bot\.yaml:6:\d+: .* — a ": " inside a value starts a mapping: quote the value/,
    ],
    [
      'an unquoted template',
      `${head}  - on: transfer.received\n    do:\n      - reply: {{ event.amount }}\n`,
      /^bot\.yaml:6:16: .*quote values that start with Liquid/,
    ],
    [
      'a missing identity',
      'name: t\nrules:\n  - on: startup\n    do: [{ log: hi }]\n',
      /^bot\.yaml:1:1: missing as: or key: .* — as: NAME/,
    ],
    [
      'both identities',
      'name: t\nas: a\nkey: k\nrules:\n  - on: startup\n    do: [{ log: hi }]\n',
      /^bot\.yaml:3:1: key: give as: or key:, not both/,
    ],
    [
      'a bad name, in words',
      'name: Tip Jar\nas: a\nrules:\n  - on: startup\n    do: [{ log: hi }]\n',
      new RegExp(
        String.raw`^bot\.yaml:1:7: name: expected a name of lower-case letters, digits, - ` +
          String.raw`and _ .*, not "Tip Jar" — e\.g\. name: tip-jar$`,
      ),
    ],
    [
      'a bad poll, in words',
      'name: t\nas: a\npoll: 5 sec\nrules:\n  - on: startup\n    do: [{ log: hi }]\n',
      /^bot\.yaml:3:7: poll: expected a duration, not "5 sec" — like 90s, 15m, 2h, 1d or 1h30m$/,
    ],
    [
      'a bad cooldown, in words',
      `${head}  - on: message.received\n    cooldown: 1 hour\n    do: [{ reply: hi }]\n`,
      /^bot\.yaml:5:15: rules\.0\.cooldown: expected a duration, not "1 hour" — like 90s/,
    ],
    [
      'a PIN of digits only, unquoted',
      `name: t\nas: a\nlimits: { send_to: [123456] }\nrules:\n  - on: startup\n    do: [{ log: hi }]\n`,
      /^bot\.yaml:3:21: limits\.send_to\.0: expected a string — quote it: "123456" \(YAML reads 123456 as a number\)$/,
    ],
    [
      'a PIN with a leading 0, unquoted',
      `${head}  - on: message.received\n    if: { from: [012345] }\n    do: [{ reply: hi }]\n`,
      /rules\.0\.if\.from\.0: 12345 is a number, not a PIN — quote PINs made of digits, e\.g\. from: \["012345"\]/,
    ],
    [
      'a syntax error in a liquid: condition',
      `${head}  - on: transfer.received\n    if: { liquid: "event.amount >" }\n    do: [accept]\n`,
      /^bot\.yaml:5:19: rules\.0\.if\.liquid: Liquid expression error: the expression ends after the operator ">"/,
    ],
    [
      'two values without an operator in a liquid: condition',
      `${head}  - on: transfer.received\n    if: { liquid: "event.amount gt 5" }\n    do: [accept]\n`,
      /Liquid expression error: expected an operator .* before "gt"/,
    ],
    [
      'a misspelt field in a liquid: condition',
      `${head}  - on: transfer.received\n    if: { liquid: "event.amout > 5" }\n    do: [accept]\n`,
      /rules\.0\.if\.liquid: event\.amout: transfer\.received events have no field "amout" — did you mean "amount"\?/,
    ],
    [
      'a misspelt template variable',
      `${head}  - on: message.received\n    do:\n      - reply: "Hi {{ event.sender.dispaly_name }}"\n`,
      new RegExp(
        String.raw`^bot\.yaml:6:16: rules\.0\.do\.0\.reply: event\.sender\.dispaly_name: ` +
          String.raw`message\.received events have no field "sender\.dispaly_name" — did ` +
          String.raw`you mean "sender\.display_name"\?`,
      ),
    ],
    [
      'an unknown template variable',
      `${head}  - on: message.received\n    do:\n      - reply: "{{ evnt.content }}"\n`,
      /unknown variable "evnt" in evnt\.content — did you mean "event"\?/,
    ],
    [
      'a literal amount that is not one',
      `${head}  - on: message.received\n    do:\n      - send_money: { to: ABC123, amount: abc }\n`,
      /rules\.0\.do\.0\.send_money\.amount: amount "abc" is not a positive number with at most 2 decimals/,
    ],
    [
      'an unknown top-level key',
      `${head}  - on: startup\n    do: [{ log: hi }]\npoll_every: 5s\n`,
      /^bot\.yaml:6:1: poll_every: unknown key "poll_every" — did you mean "poll"\?/,
    ],
    [
      'a misspelt trigger',
      `${head}  - on: transfer.recieved\n    do: [accept]\n`,
      /^bot\.yaml:4:9: rules\.0\.on: unknown trigger "transfer\.recieved" — did you mean "transfer\.received"\?/,
    ],
    [
      'a trigger misspelt before its dot',
      `${head}  - on: mesage.received\n    do: [accept]\n`,
      /^bot\.yaml:4:9: rules\.0\.on: unknown trigger "mesage\.received" — did you mean "message\.received"\?/,
    ],
    [
      'a misspelt bare action',
      `${head}  - on: transfer.received\n    do:\n      - acept\n`,
      /^bot\.yaml:6:9: rules\.0\.do\.0: unknown action "acept" — did you mean "accept"\?/,
    ],
    [
      'a misspelt action key',
      `${head}  - on: transfer.received\n    do:\n      - replay: hi\n`,
      /^bot\.yaml:6:9: rules\.0\.do\.0\.replay: unknown action "replay" — did you mean "reply"\?/,
    ],
    [
      'a misspelt event field',
      `${head}  - on: transfer.received\n    if: { amout: { max: 5 } }\n    do: [accept]\n`,
      new RegExp(
        String.raw`^bot\.yaml:5:11: rules\.0\.if\.amout: unknown condition or event field ` +
          String.raw`"amout" for transfer\.received events — did you mean "amount"\?`,
      ),
    ],
    [
      'a misspelt condition',
      `${head}  - on: message.received\n    if:\n      form: [ABC123]\n    do: [{ reply: hi }]\n`,
      /^bot\.yaml:6:7: rules\.0\.if\.form: unknown condition or event field "form" .* did you mean "from"\?/,
    ],
    [
      'a bad matcher key',
      `${head}  - on: transfer.received\n    if: { amount: { maximum: 5 } }\n    do: [accept]\n`,
      /^bot\.yaml:5:21: rules\.0\.if\.amount\.maximum: unknown key "maximum" — did you mean "max"\?/,
    ],
    [
      'a bad regular expression',
      `${head}  - on: message.received\n    if: { content: { matches: "(" } }\n    do: [{ reply: hi }]\n`,
      /^bot\.yaml:5:31: rules\.0\.if\.content\.matches: invalid regular expression/,
    ],
    [
      'accept on an event with nothing to accept',
      `${head}  - on: message.received\n    do: [accept]\n`,
      new RegExp(
        String.raw`^bot\.yaml:5:10: rules\.0\.do\.0: accept needs an event with something ` +
          String.raw`to accept, and message\.received has none`,
      ),
    ],
    [
      'reply with no one to reply to',
      `${head}  - on: { schedule: "0 9 * * *" }\n    do:\n      - reply: hi\n`,
      new RegExp(
        String.raw`^bot\.yaml:6:16: rules\.0\.do\.0\.reply: reply needs an event with ` +
          String.raw`someone to reply to, and schedule has none — use send_message`,
      ),
    ],
    [
      'a bad cron expression',
      `${head}  - on: { schedule: "61 * * * *" }\n    do: [{ log: hi }]\n`,
      /^bot\.yaml:4:21: rules\.0\.on\.schedule: "61 \* \* \* \*" is not a cron expression — five fields/,
    ],
    [
      'an unknown time zone',
      `${head}  - on: { schedule: { cron: "0 9 * * *", timezone: Mars/Olympus } }\n    do: [{ log: hi }]\n`,
      /^bot\.yaml:4:52: rules\.0\.on\.schedule\.timezone: unknown time zone "Mars\/Olympus"/,
    ],
    [
      'a template error',
      `${head}  - on: transfer.received\n    do:\n      - reply: "Hi {{ event.sender | upcase_it }}"\n`,
      new RegExp(
        String.raw`^bot\.yaml:6:20: rules\.0\.do\.0\.reply: Liquid template error: ` +
          String.raw`undefined filter: upcase_it \(template line 1, col 4\)`,
      ),
    ],
    [
      'a bad wait',
      `${head}  - on: startup\n    do:\n      - wait: 5 minutes\n`,
      /^bot\.yaml:6:15: rules\.0\.do\.0\.wait: "5 minutes" is not a duration — like 90s/,
    ],
    [
      'two actions in a step',
      `${head}  - on: transfer.received\n    do:\n      - accept: null\n        reply: hi\n`,
      /^bot\.yaml:7:9: rules\.0\.do\.0\.reply: a step has exactly one action; this one also has reply/,
    ],
    [
      'a missing environment variable',
      'name: t\nkey: ${env:PINBOT_KEY_NOPE}\nserver: https://api.example.com\nrules:\n  - on: startup\n    do: [{ log: hi }]\n',
      /^bot\.yaml:2:6: key: environment variable PINBOT_KEY_NOPE is not set/,
    ],
    [
      'as: with a remote server',
      'name: t\nas: alice\nserver: https://api.example.com\nrules:\n  - on: startup\n    do: [{ log: hi }]\n',
      /^bot\.yaml:2:1: as: as: works only with the embedded server — use key:/,
    ],
    [
      'a duplicate rule id',
      `${head}  - { id: a, on: startup, do: [{ log: hi }] }\n  - { id: a, on: startup, do: [{ log: hi }] }\n`,
      /^bot\.yaml:5:11: rules\.1\.id: rule id "a" is used twice \(also by rules\.0\.id\)/,
    ],
    [
      'from with a bad PIN',
      `${head}  - on: transfer.received\n    if: { from: [ABC12] }\n    do: [accept]\n`,
      /^bot\.yaml:5:18: rules\.0\.if\.from\.0: "ABC12" is not a PIN/,
    ],
    [
      'a too short poll',
      'name: t\nas: a\npoll: 100ms\nrules:\n  - on: startup\n    do: [{ log: hi }]\n',
      /^bot\.yaml:3:7: poll: poll 100ms is too short/,
    ],
  ])('%s', (_what, text, expected) => {
    const got = problems(text);
    expect(
      got.some((p) => expected.test(p)),
      got.join('\n'),
    ).toBe(true);
  });

  it('an unquoted template is reported at its place, and leaks no Node warning on stderr', async () => {
    const warnings: unknown[] = [];
    const listen = (w: unknown) => void warnings.push(w);
    process.on('warning', listen);
    try {
      expect(problems(`${head}  - on: transfer.received\n    do:\n      - reply: {{ event.amount }}\n`)).toEqual([
        expect.stringMatching(/^bot\.yaml:6:16: .*quote values that start with Liquid/),
      ]);
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
    } finally {
      process.off('warning', listen);
    }
    expect(warnings).toEqual([]);
  });

  it('reports every problem of a file at once, in file order', () => {
    const got = problems(
      `${head}  - on: transfer.recieved\n    do: [acept]\n  - on: message.received\n ` +
        `   if: { content: { matches: "(" } }\n    do: [{ replay: hi }]\n`,
    );
    expect(
      got.map((p) => p.split(': ')[0]),
      got.join('\n'),
    ).toEqual(['bot.yaml:4:9', 'bot.yaml:5:10', 'bot.yaml:7:31', 'bot.yaml:8:12']);
  });

  it(
    'warns (the file stays valid) when send_money takes its recipient or amount from ' +
      'the event and the bot has no limits',
    () => {
      const text =
        `${head}  - on: message.received\n    do:\n      - send_money: { to: "{{ ` +
        `event.sender.pin_code }}", amount: "{{ event.content }}" }\n`;
      const r = loadBot('bot.yaml', text, { registry });
      expect(r.problems).toEqual([]);
      expect(r.bot).toBeDefined();
      expect(r.warnings!.map(formatProblem)).toEqual([
        'bot.yaml:6:21: rules.0.do.0.send_money: send_money takes its to and amount ' +
          'from a template and the bot has no limits: whoever causes the event decides ' +
          'what it pays — add limits: { max_per_transfer: 5, max_per_day: 20 } (and ' +
          'send_to: [PIN…] to allow only some recipients)',
      ]);
      expect(
        loadBot('bot.yaml', text.replace('rules:', 'limits: { max_per_day: 20 }\nrules:'), { registry }).warnings,
      ).toEqual([]);
      expect(
        loadBot(
          'bot.yaml',
          `${head}  - on: message.received\n    do:\n      - send_money: { to: ABC123, amount: 1 }\n`,
          {
            registry,
          },
        ).warnings,
      ).toEqual([]);
    },
  );

  it('warns (the file stays valid) when a rule reads an event field only some of its triggers have', () => {
    const text =
      `${head}  - on: [message.received, contact_request.received]\n    do:\n      - ` +
      `reply: "you said {{ event.content }}"\n`;
    const r = loadBot('bot.yaml', text, { registry });
    expect(r.problems).toEqual([]);
    expect(r.warnings!.map(formatProblem)).toEqual([
      'bot.yaml:6:16: rules.0.do.0.reply: event.content: contact_request.received ' +
        'events have no field "content" (only message.received has it): a run for one ' +
        'fails — write {{ event.content | default: "" }} if it may be missing, or give ' +
        'contact_request.received a rule of its own',
    ]);
    // in a liquid: condition too; `| default:` says it may be missing; a field both have is fine
    const liquidCond =
      `${head}  - on: [message.received, contact_request.received]\n    if: { liquid: ` +
      `"event.content == 'hi'" }\n    do: [{ log: x }]\n`;
    expect(loadBot('bot.yaml', liquidCond, { registry }).warnings!.map(formatProblem)).toEqual([
      expect.stringMatching(
        new RegExp(
          String.raw`^bot\.yaml:5:19: rules\.0\.if\.liquid: event\.content: ` +
            String.raw`contact_request\.received events have no field "content"`,
        ),
      ),
    ]);
    expect(
      loadBot('bot.yaml', text.replace('event.content', "event.content | default: 'nothing'"), { registry }).warnings,
    ).toEqual([]);
    expect(loadBot('bot.yaml', text.replace('event.content', 'event.id'), { registry }).warnings).toEqual([]);
  });

  it(
    'an unknown plugin condition says the plugin is not loaded (restart), and a near ' +
      'miss of a condition says "did you mean"',
    () => {
      const withPlugin = createRegistry().addCondition({
        name: 'crm.is_vip',
        description: 'a VIP',
        schema: { type: 'boolean' },
        example: true,
        compile: () => async () => ({ ok: true, label: 'vip' }),
      });
      const check = (reg: typeof registry, cond: string) =>
        loadBot('bot.yaml', `${head}  - on: message.received\n    if: { ${cond}: true }\n    do: [{ log: x }]\n`, {
          registry: reg,
        }).problems.map(formatProblem);
      expect(check(registry, 'shop.open')).toEqual([
        'bot.yaml:5:11: rules.0.if.shop.open: unknown condition "shop.open" — no plugin ' +
          'named shop is loaded — plugins load when pinbot starts (from plugins/ and ' +
          'plugins.packages): restart a running server after adding shop, or check the ' +
          'name',
      ]);
      expect(check(withPlugin, 'crm.is_vp')).toEqual([
        expect.stringMatching(
          /unknown condition or event field "crm\.is_vp" for message\.received events — did you mean "crm\.is_vip"\?$/,
        ),
      ]);
    },
  );

  it('reads ${env:VAR} and compiles a valid file', () => {
    const r = loadBot(
      'bot.yaml',
      'name: remote\nkey: ${env:PINBOT_KEY_K}\nserver: https://x.example\nrules:\n  - on: transfer.received\n    do: [accept]\n',
      { registry, env: { PINBOT_KEY_K: 'pinbot_abc' }, allowedServers: ['https://x.example'] },
    );
    expect(r.problems).toEqual([]);
    expect(r.bot).toMatchObject({
      name: 'remote',
      identity: { key: 'pinbot_abc' },
      server: 'https://x.example',
      pollMs: 5000,
      sources: ['pending_transfers'],
    });
  });
});

describe('the published JSON Schema', () => {
  // the registry of `serve` in this project: built-ins and the plugins of plugins/
  const projectRegistry = () =>
    buildRegistry({
      config: loadConfig(join(import.meta.dirname, '../../config.yaml')),
      log: pino({ level: 'silent' }),
      projectDir: join(import.meta.dirname, '../..'),
    });

  it(
    'schemas/bot.schema.json is up to date with the built-ins and the project plugins ' + '(run `npm run schemas`)',
    async () => {
      expect(readFileSync(BOT_SCHEMA_FILE, 'utf8')).toBe(botSchemaText(await projectRegistry()));
    },
  );

  it('accepts every example bot, as an editor would check it', async () => {
    const project = await projectRegistry();
    const validate = new Ajv({ strict: false }).compile(JSON.parse(readFileSync(BOT_SCHEMA_FILE, 'utf8')));
    const dir = join(import.meta.dirname, '../../bots');
    const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const f of files) {
      const text = readFileSync(join(dir, f), 'utf8');
      expect(text.startsWith('# yaml-language-server: $schema=../schemas/bot.schema.json')).toBe(true);
      expect(validate(parse(text)), `${f}: ${JSON.stringify(validate.errors)}`).toBe(true);
      expect(loadBot(f, text, { registry: project }).problems).toEqual([]);
    }
  });
});

describe('pinbot bots validate', () => {
  it('prints each problem with its position and exits 1; names used twice are problems', () => {
    const tmp = tempDir();
    try {
      const bad = join(tmp.dir, 'bad.yaml');
      const good = join(tmp.dir, 'good.yaml');
      writeFileSync(bad, `${head}  - on: transfer.received\n    do: [acept]\n`);
      writeFileSync(good, `name: good\nas: alice\nrules:\n  - on: transfer.received\n    do: [accept]\n`);
      const r = spawnSync(process.execPath, ['bin/pinbot.js', 'bots', 'validate', bad, good], { encoding: 'utf8' });
      expect(r.status).toBe(1);
      expect(r.stdout).toContain(`${bad}:5:10: rules.0.do.0: unknown action "acept" — did you mean "accept"?`);
      expect(r.stdout).toContain(`ok  ${good} (good)`);
      expect(r.stdout).toContain('1 of 2 bot file(s) valid');
      expect(validateFiles([good, good], createRegistry())[1]!.problems.map(formatProblem)).toEqual([
        `${good}:1:1: name: the bot name "good" is also used by ${good} — give each bot its own name`,
      ]);
    } finally {
      tmp.cleanup();
    }
  });
});

describe('docs/bots.md', () => {
  it('documents every registered trigger, condition and action', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../docs/bots.md'), 'utf8');
    const names = [...registry.triggers.keys(), ...registry.conditions.keys(), ...registry.actions.keys()];
    expect(names.filter((n) => !doc.includes(`| \`${n}\` |`))).toEqual([]);
  });
});
