import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createKey } from '../../src/domain/users/keys.js';
import { fileBotStorage } from '../../src/deployment/bot-storage.js';
import { tracesFromFiles } from '../../src/deployment/file.js';
import { botWorld, testHost, type BotWorld } from '../helpers/bots.js';

let w: BotWorld;
afterEach(() => w?.close());

describe('bots run against a remote server (pinbot bots run --server URL)', () => {
  it(
    'uses key:, keeps its state in data/bots/remote, resumes after a restart without ' + 'repeating, and refuses as:',
    async () => {
      w = await botWorld();
      const remoteUser = await w.user('Remote Bot');
      const alice = await w.user('Alice');
      const key = await w.server.store.transaction((tx) => createKey(tx, w.server.env, remoteUser.user.id));
      const file = join(w.dir, 'remote.yaml');
      writeFileSync(
        file,
        'name: remote\nkey: ${env:PINBOT_KEY_REMOTE}\nrules:\n  - on: ' +
          'message.received\n    do:\n      - reply: "remote got {{ event.content }}"\n',
      );
      const local = join(w.dir, 'local.yaml');
      writeFileSync(local, 'name: local\nas: Alice\nrules:\n  - on: message.received\n    do:\n      - reply: x\n');
      const stateDir = join(w.dir, 'client-data', 'bots');
      const host = () =>
        testHost({
          clock: w.clock,
          scheduler: w.server.scheduler,
          storage: fileBotStorage({ stateDir }),
          files: [file, local],
          server: w.server.url,
          env: { PINBOT_KEY_REMOTE: key.api_key },
        });
      const h1 = host();
      const report = await h1.start();
      expect(report.find((r) => r.name === 'local')).toMatchObject({
        status: 'invalid',
        problems: [expect.stringContaining('as: works only with the embedded server')],
      });
      await h1.runner('remote')!.pollNow();
      await alice.api.messages.send({ recipient_pin: remoteUser.user.pin_code, content: 'one' });
      await h1.runner('remote')!.pollNow();
      await h1.stop();
      await alice.api.messages.send({ recipient_pin: remoteUser.user.pin_code, content: 'two' });
      const h2 = host();
      await h2.start();
      await h2.runner('remote')!.pollNow();
      await h2.runner('remote')!.pollNow();
      await h2.stop();
      const [conv] = (await alice.api.conversations.list()).conversations;
      expect((await alice.api.conversations.messages(conv!.id)).messages.map((m) => m.content)).toEqual([
        'one',
        'remote got one',
        'two',
        'remote got two',
      ]);
      // offline `pinbot bots trace remote` reads the persisted history
      expect(tracesFromFiles(stateDir, 'remote', 10)!.map((t) => t.event.summary)).toEqual([
        `message.received "one" from Alice (${alice.user.pin_code})`,
        `message.received "two" from Alice (${alice.user.pin_code})`,
      ]);
    },
  );
});
