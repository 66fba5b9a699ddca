import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BOT_ENV_PATHS, pathAllowed } from '../../src/config/env-refs.js';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { createRegistry } from '../../src/runtime/registry.js';
import { loadBot } from '../../src/runtime/define/loader.js';
import { liquid, render } from '../../src/runtime/liquid/templates.js';
import { formatProblem } from '../../src/util/yaml-errors.js';
import { tempDir } from '../helpers/api.js';

// Issue 13 item 2: templates read files (another bot's key, config.yaml, the journal) and any
// string read environment variables, so both could end up in a chat reply.
const registry = createRegistry();
const load = (text: string, env: NodeJS.ProcessEnv = {}, envAllow: string[] = []) =>
  loadBot('bot.yaml', text, { registry, env, envAllow, allowedServers: ['https://api.example.com'] });
const problems = (text: string, env: NodeJS.ProcessEnv = {}, envAllow: string[] = []) =>
  load(text, env, envAllow).problems.map(formatProblem);
const replyBot = (reply: string) =>
  `name: t\nas: alice\nrules:\n  - on: message.received\n    do:\n      - reply: ${reply}\n`;

describe('templates have no file system', () => {
  it.each([
    ['include', `"Your key: {% include 'data/bots/keys/greeter.json' %}"`, 27, '{% include %}'],
    ['render', `"{% render 'config.yaml' %}"`, 17, '{% render %}'],
    ['layout', `"{% layout 'data/journal.jsonl' %}"`, 17, '{% layout %}'],
    ['include with whitespace control', `"a {%- include 'x' -%}"`, 19, '{% include %}'],
    ['include inside if', `"{% if true %}{% include 'config.yaml' %}{% endif %}"`, 30, '{% include %}'],
  ])('%s is a validation error at the tag, with what to do', (_what, reply, col, tag) => {
    const got = problems(replyBot(reply));
    expect(got).toHaveLength(1);
    expect(got[0]).toMatch(/^bot\.yaml:6:(\d+): rules\.0\.do\.0\.reply: Liquid template error: /);
    expect(got[0]).toContain(`bot.yaml:6:${col}: `);
    expect(got[0]).toContain(`${tag} is not available: bot templates cannot read files`);
    expect(got[0]).toContain('— write the text into the template itself, or keep it in vars:');
  });

  it('a {% liquid %} block cannot include either', () => {
    const got = problems(
      `name: t\nas: alice\nrules:\n  - on: message.received\n    do:\n      - reply: ` +
        `|\n          {% liquid\n            include 'config.yaml'\n          %}\n`,
    );
    expect(got.join('\n')).toMatch(
      /^bot\.yaml:8:13: rules\.0\.do\.0\.reply: Liquid template error: \{% include %\} is not available/,
    );
  });

  it('at run time, even past validation, no template reads a file', async () => {
    for (const t of [
      "{% include 'config.yaml' %}",
      "{% render 'package.json' %}",
      "{% layout 'config.yaml' %}x",
      "{% liquid\ninclude 'config.yaml'\n%}",
    ]) {
      await expect(render(t, {}), t).rejects.toThrow(/bot templates cannot read files/);
    }
    // the engine's file system beneath the tags has no files either
    await expect(liquid.renderFile('config.yaml')).rejects.toThrow(/ENOENT|cannot read files/);
    await expect(liquid.parseFile('package.json')).rejects.toThrow(/ENOENT|cannot read files/);
    expect(() => liquid.options.fs.readFileSync('config.yaml')).toThrow(/bot templates cannot read files/);
    expect(liquid.options.fs.existsSync('config.yaml')).toBe(false);
  });

  it('other tags and filters still work', async () => {
    expect(await render('{% assign n = 2 %}{% for i in (1..n) %}{{ i }}{% endfor %} {{ "x" | upcase }}', {})).toBe(
      '12 X',
    );
  });
});

describe('${env:…} only where a secret belongs', () => {
  const remote = (extra: string) =>
    `name: t\nkey: \${env:PINBOT_KEY_BOT}\nserver: https://\${env:PINBOT_SERVER_HOST}\n${
      extra
    }rules:\n  - on: message.received\n    do:\n      - reply: hi\n`;

  it('key and server read the environment', () => {
    const r = load(remote(''), { PINBOT_KEY_BOT: 'pinbot_abc', PINBOT_SERVER_HOST: 'api.example.com' });
    expect(r.problems).toEqual([]);
    expect(r.bot).toMatchObject({ identity: { key: 'pinbot_abc' }, server: 'https://api.example.com' });
  });

  it('a reply that reads the environment is refused at the reference, with what is allowed and what to do', () => {
    const got = problems(replyBot('"The key is ${env:BOT_KEY}"'), { BOT_KEY: 'pinbot_abc' });
    expect(got).toEqual([
      'bot.yaml:6:28: rules.0.do.0.reply: ${env:BOT_KEY} is not allowed here: bot ' +
        'files read environment variables only in key (PINBOT_KEY_…) and server ' +
        '(PINBOT_SERVER…) — put the secret in key: or server:; if BOT_KEY is no secret, ' +
        'list it in config.yaml under bots: { env_allow: [BOT_KEY] }',
    ]);
  });

  it('vars: refused, unless the operator allow-lists the name', () => {
    const text = remote('vars:\n  greeting: ${env:GREETING}\n');
    const env = { PINBOT_KEY_BOT: 'k', PINBOT_SERVER_HOST: 'api.example.com', GREETING: 'hello' };
    expect(problems(text, env)[0]).toMatch(/^bot\.yaml:5:13: vars\.greeting: \$\{env:GREETING\} is not allowed here/);
    const ok = load(text, env, ['GREETING']);
    expect(ok.problems).toEqual([]);
    expect(ok.bot!.spec.vars).toEqual({ greeting: 'hello' });
  });

  it('a step argument: refused, unless the operator allow-lists the name', () => {
    const text =
      'name: t\nas: alice\nrules:\n  - on: message.received\n    do:\n      - ' +
      'send_message: { to: ABC123, content: "${env:GREETING}" }\n';
    expect(problems(text, { GREETING: 'hello' })[0]).toMatch(
      /^bot\.yaml:6:47: rules\.0\.do\.0\.send_message\.content: \$\{env:GREETING\} is not allowed here/,
    );
    expect(problems(text, { GREETING: 'hello' }, ['GREETING'])).toEqual([]);
  });

  it('the allow-list of paths is one exported constant', () => {
    expect(BOT_ENV_PATHS).toEqual(['key', 'server']);
    expect(pathAllowed(['key'], BOT_ENV_PATHS)).toBe(true);
    expect(pathAllowed(['plugins', 'karma', 'token'], ['plugins.**'])).toBe(true);
    expect(pathAllowed(['plugins'], ['plugins.**'])).toBe(false);
    expect(pathAllowed(['rules', 0, 'do', 0, 'reply'], BOT_ENV_PATHS)).toBe(false);
    expect(pathAllowed(['a', 'x', 'b'], ['a.*.b'])).toBe(true);
  });
});

describe('config.yaml bots.env_allow', () => {
  it('is validated (variable names only) and read by `pinbot bots validate`', () => {
    const tmp = tempDir();
    try {
      const bad = join(tmp.dir, 'bad.yaml');
      writeFileSync(bad, 'bots:\n  env_allow: [GREETING, "not a name"]\n');
      expect(() => loadConfig(bad, {})).toThrow(ConfigError);
      try {
        loadConfig(bad, {});
      } catch (err) {
        expect((err as ConfigError).message).toMatch(
          new RegExp(`^${bad}:2:25: bots\\.env_allow\\.1: expected a value matching`),
        );
      }
      const config = join(tmp.dir, 'config.yaml');
      writeFileSync(config, 'bots:\n  env_allow: [GREETING]\n');
      expect(loadConfig(config, {}).bots.env_allow).toEqual(['GREETING']);
      const bot = join(tmp.dir, 'bot.yaml');
      writeFileSync(
        bot,
        'name: t\nas: alice\nrules:\n  - on: message.received\n    do:\n      - ' +
          'reply: "${env:GREETING}, and ${env:OTHER}"\n',
      );
      const r = spawnSync(process.execPath, ['bin/pinbot.js', 'bots', 'validate', '--config', config, bot], {
        encoding: 'utf8',
        env: { ...process.env, GREETING: 'hi', OTHER: 'x' },
      });
      expect(r.stdout).toContain(`${bot}:6:38: rules.0.do.0.reply: \${env:OTHER} is not allowed here`);
      expect(r.stdout).not.toContain('${env:GREETING} is not allowed');
      expect(r.status).toBe(1);
    } finally {
      tmp.cleanup();
    }
  });
});
