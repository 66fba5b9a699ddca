import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, configFrom, loadConfig } from '../../src/config/load.js';
import { tempDir } from '../helpers/api.js';

const tmp = tempDir('pinbot-config-');
afterAll(() => tmp.cleanup());
let n = 0;
function file(text: string): string {
  const f = join(tmp.dir, `config-${n++}.yaml`);
  writeFileSync(f, text);
  return f;
}
function problems(f: string, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    loadConfig(f, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message.split('\n');
  }
  throw new Error('expected a ConfigError');
}

describe('config.yaml', () => {
  it('every key is optional: a missing file or an empty one gives the defaults of API.md', () => {
    const expected = {
      server: { host: '127.0.0.1', port: 3000 },
      rate_limits: {
        enabled: true,
        general: { limit: 100, window: '1m' },
        messages: { limit: 30, window: '1m' },
        contacts: { limit: 20, window: '1h' },
        intros: { limit: 10, window: '1h' },
      },
      wallet: { max_transfer: 1_000_000 },
      ubi: { amount_per_day: 1, schedule: '0 0 * * *' },
      subscription: { trial_days: 30 },
      messaging: { max_length: 4000, max_group_size: 100 },
    };
    expect(loadConfig(join(tmp.dir, 'missing.yaml'))).toMatchObject(expected);
    expect(loadConfig(file(''))).toMatchObject(expected);
    expect(loadConfig(file('# only a comment\n'))).toMatchObject(expected);
  });

  it('the shipped config.yaml is valid and equals the defaults', () => {
    expect(loadConfig('config.yaml', {})).toEqual(configFrom({}));
  });

  it('a partial section keeps the defaults of its other keys', () => {
    const c = loadConfig(file('rate_limits:\n  general: { limit: 7 }\n'));
    expect(c.rate_limits.general).toEqual({ limit: 7, window: '1m' });
    expect(c.rate_limits.enabled).toBe(true);
    expect(c.server.port).toBe(3000);
  });

  it('an unknown key stops start-up with file:line:col and the key', () => {
    const f = file('server:\n  host: 0.0.0.0\n  prot: 8080\n');
    expect(problems(f)).toEqual([`${f}:3:3: server.prot: unknown key "prot" — remove it or check its spelling`]);
    const top = file('servr: {}\n');
    expect(problems(top)).toEqual([`${top}:1:1: servr: unknown key "servr" — remove it or check its spelling`]);
  });

  it('a wrong type stops start-up with file:line:col, the expected type and what was found', () => {
    const f = file('server:\n  port: "eighty"\nrate_limits:\n  enabled: "no"\n  general: { limit: 2.5, window: 1m }\n');
    expect(problems(f)).toEqual([
      `${f}:2:9: server.port: expected an integer — found "eighty"`,
      `${f}:4:12: rate_limits.enabled: expected a boolean — found "no"`,
      `${f}:5:21: rate_limits.general.limit: expected an integer — found 2.5`,
    ]);
  });

  it('a malformed window or cron expression is reported where it is', () => {
    const f = file('rate_limits:\n  messages: { window: 1 minute }\nubi:\n  schedule: "every day"\n');
    expect(problems(f)[0]).toMatch(new RegExp(`^${f}:2:23: rate_limits.messages.window: expected a value matching`));
    const g = file('ubi:\n  schedule: "every day"\n');
    expect(problems(g)).toEqual([
      `${g}:2:13: ubi.schedule: expected a cron expression — e.g. "0 0 * * *" (midnight UTC)`,
    ]);
  });

  it('a YAML syntax error is reported at its cause', () => {
    const f = file('server:\n  port: [1, 2\n');
    expect(problems(f)[0]).toBe(`${f}:2:9: this [ is never closed — add ] where the list ends`);
  });

  it('${env:VAR} is replaced; a whole-value reference takes the YAML type of the variable', () => {
    const f = file('server:\n  host: ${env:PB_HOST}\n  port: ${env:PB_PORT}\nbots:\n  dir: ${env:PB_HOME}/bots\n');
    const c = loadConfig(f, { PB_HOST: '0.0.0.0', PB_PORT: '8080', PB_HOME: '/srv/pinbot' });
    expect(c.server).toMatchObject({ host: '0.0.0.0', port: 8080 });
    expect(c.bots.dir).toBe('/srv/pinbot/bots');
  });

  it('an unset variable, or one of the wrong type, stops start-up at its line', () => {
    const f = file('server:\n  port: ${env:PB_PORT}\n');
    expect(problems(f, {})).toEqual([
      `${f}:2:9: server.port: environment variable PB_PORT is not set — export PB_PORT=… or remove the reference`,
    ]);
    expect(problems(f, { PB_PORT: 'http' })).toEqual([`${f}:2:9: server.port: expected an integer — found "http"`]);
  });
  it(
    'store.driver postgres needs store.url, a postgres:// URL (from the environment); ' +
      'the password is never echoed',
    () => {
      const f = file('store:\n  driver: postgres\n');
      expect(problems(f)).toEqual([
        `${f}:2:11: store.driver: is postgres but store.url is not set — add ` +
          `store.url: \${env:DATABASE_URL} (a postgres:// URL), or use driver: file`,
      ]);
      const g = file('store:\n  driver: postgres\n  url: ${env:DATABASE_URL}\n');
      expect(loadConfig(g, { DATABASE_URL: 'postgres://pinbot:secret@db:5432/pinbot' }).store).toEqual({
        compact_bytes: 67_108_864,
        driver: 'postgres',
        url: 'postgres://pinbot:secret@db:5432/pinbot',
        schema: 'pinbot',
        pool_size: 10,
        read_wait: '5s',
      });
      const bad = problems(g, { DATABASE_URL: 'mysql://pinbot:secret@db/pinbot' });
      expect(bad).toEqual([`${g}:3:8: store.url: expected a value matching ^postgres(ql)?://`]);
      expect(bad.join('')).not.toContain('secret');
      expect(loadConfig(file('')).store.driver).toBe('file');
    },
  );
});
