import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createKey } from '../../src/domain/users/keys.js';
import { fileBotStorage } from '../../src/deployment/bot-storage.js';
import { botWorld, testHost, type BotWorld } from '../helpers/bots.js';

let w: BotWorld;
afterEach(() => w?.close());

describe('a key: bot is who GET /me says, on its user rate budget', () => {
  it('two keys of one user share one budget; a key of another user has its own', async () => {
    w = await botWorld();
    const desk = await w.user('Desk');
    const other = await w.user('Other');
    const second = await w.server.store.transaction((tx) => createKey(tx, w.server.env, desk.user.id));
    const bot = (name: string, env: string) => {
      const file = join(w.dir, `${name}.yaml`);
      writeFileSync(file, `name: ${name}\nkey: \${env:${env}}\nrules:\n  - on: startup\n    do: [{ log: hi }]\n`);
      return file;
    };
    const host = testHost({
      clock: w.clock,
      scheduler: w.server.scheduler,
      storage: fileBotStorage({ stateDir: join(w.dir, 'key-bots') }),
      files: [bot('one', 'PINBOT_KEY_ONE'), bot('two', 'PINBOT_KEY_TWO'), bot('three', 'PINBOT_KEY_THREE')],
      server: w.server.url,
      env: { PINBOT_KEY_ONE: desk.key, PINBOT_KEY_TWO: second.api_key, PINBOT_KEY_THREE: other.key },
    });
    await host.start();
    try {
      const runner = (name: string) => host.runner(name)!;
      for (const name of ['one', 'two', 'three']) await runner(name).started;
      expect(runner('one').status).toBe('running');
      expect(runner('one').me?.id).toBe(desk.user.id);
      expect(runner('two').me?.id).toBe(desk.user.id);
      expect(runner('three').me?.id).toBe(other.user.id);
      const budget = (name: string) => runner(name).client?.http.budget;
      expect(budget('one')).toBeDefined();
      expect(budget('one')).toBe(budget('two'));
      expect(budget('three')).not.toBe(budget('one'));
      // the client that asked GET /me is the one the bot runs with: it knows the server's clock
      expect(runner('one').client?.http.lastDate).toBeDefined();
    } finally {
      await host.stop();
    }
  });
});
