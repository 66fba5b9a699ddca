import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BotMetas } from '../../src/runtime/index.js';
import { dataDirIntegrity } from '../../src/deployment/store-integrity.js';
import { FileStore } from '../../src/store/file/file-store.js';
import { tempDir } from '../helpers/api.js';
import { pinbot } from '../helpers/spawn.js';

const tmp = tempDir('pinbot-cli-');
afterAll(() => tmp.cleanup());

// Without a server, each command opens the store itself under its lock.
describe('the CLI without a running server', { timeout: 120_000 }, () => {
  it('users add --json prints one JSON object; the user and key are in the data directory afterwards', async () => {
    const data = join(tmp.dir, 'offline');
    const add = await pinbot(['users', 'add', '--name', '  Bob  ', '--json', '--data', data]);
    expect(add.stderr).toBe('');
    expect(add.code).toBe(0);
    expect(add.stdout.trim().split('\n')).toHaveLength(1);
    const bob = JSON.parse(add.stdout);
    expect(bob).toEqual({
      id: expect.stringMatching(/^usr_/),
      display_name: 'Bob',
      pin_code: expect.stringMatching(/^[A-Z0-9]{6}$/),
      api_key: expect.stringMatching(/^pinbot_[\w-]{32}$/),
    });
    expect(existsSync(join(data, 'db.json'))).toBe(true);
    expect(existsSync(join(data, 'pinbot.lock'))).toBe(false);

    const list = await pinbot(['keys', 'list', '--pin', bob.pin_code, '--json', '--data', data]);
    const { keys } = JSON.parse(list.stdout);
    expect(keys).toEqual([
      { id: expect.stringMatching(/^key_/), created_at: expect.any(String), last_used_at: null, revoked_at: null },
    ]);

    const revoke = await pinbot(['keys', 'revoke', keys[0].id, '--json', '--data', data]);
    expect(JSON.parse(revoke.stdout)).toEqual({ id: keys[0].id, revoked_at: expect.stringMatching(/^\d{4}-/) });
    const human = await pinbot(['users', 'list', '--data', data]);
    expect(human.stdout).toBe(`${bob.pin_code}  ${bob.id}  Bob\n`);
  });

  it("bots vars shows and --reset resets a bot's variables in the data directory", async () => {
    const data = join(tmp.dir, 'vars');
    const store = await FileStore.open(data, { integrity: dataDirIntegrity });
    await store.transaction((tx) =>
      tx.col(BotMetas).put({
        id: 'tip-jar',
        vars: { cap: 3, tips: 9 },
        file_vars: { cap: 3 },
        seq: 0,
        boots: 1,
        spend: { date: '', cents: 0 },
        last_run: {},
      }),
    );
    await store.close();
    const shown = await pinbot(['bots', 'vars', 'tip-jar', '--data', data]);
    expect(shown.stderr).toBe('');
    expect(shown.stdout).toBe('tip-jar:\n  vars.cap = 3\n  vars.tips = 9  (not in the file: set by a rule)\n');
    const reset = await pinbot(['bots', 'vars', 'tip-jar', '--reset', '--data', data]);
    expect(reset.stdout).toBe("tip-jar: variables reset to the file's vars:\n  vars.cap = 3\n");
    expect(JSON.parse((await pinbot(['bots', 'vars', 'tip-jar', '--json', '--data', data])).stdout)).toEqual({
      bot: 'tip-jar',
      vars: { cap: 3 },
      file_vars: { cap: 3 },
    });
    const typo = await pinbot(['bots', 'vars', 'tip_jar', '--data', data]);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toMatch(/^pinbot: no bot named tip_jar has variables in this store; did you mean "tip-jar"\?/);
  });

  it.concurrent('clock commands need a running --virtual-clock server, and say so', async () => {
    const r = await pinbot(['clock', 'advance', '2h', '--data', join(tmp.dir, 'clock')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'pinbot: clock commands need a running `pinbot serve --virtual-clock` on this data directory\n',
    );
  });

  it.concurrent('config errors stop serve with file:line and the expected type, exit 1', async () => {
    const cfg = join(tmp.dir, 'bad.yaml');
    writeFileSync(cfg, 'server:\n  port: "http"\n  hots: 0.0.0.0\n');
    const r = await pinbot(['serve', '--data', join(tmp.dir, 'bad-data'), '--config', cfg]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `pinbot: ${cfg}:3:3: server.hots: unknown key "hots" — remove it or check its spelling\n` +
        `${cfg}:2:9: server.port: expected an integer — found "http"\n`,
    );
    expect(existsSync(join(tmp.dir, 'bad-data'))).toBe(false); // nothing was created
  });

  it.concurrent('an explicit --config that does not exist is an error, not silent defaults', async () => {
    const r = await pinbot(['users', 'list', '--data', join(tmp.dir, 'x'), '--config', join(tmp.dir, 'nope.yaml')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `pinbot: config file ${join(tmp.dir, 'nope.yaml')} does not exist. Check the ` +
        `path, or leave out --config to use ./config.yaml (or the defaults).\n`,
    );
  });
});
