import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestWorld, type TestWorld } from '../../src/testing/world.js';
import { tempDir } from '../helpers/api.js';
import { eventually } from '../helpers/serve-child.js';
import { spawnNode, type Child } from '../helpers/spawn.js';

let world: TestWorld | undefined;
let child: Child | undefined;
const temps: Array<() => void> = [];
afterEach(async () => {
  if (child && child.proc.exitCode === null && child.proc.signalCode === null) {
    child.proc.kill('SIGKILL');
    await child.exited;
  }
  child = undefined;
  await world?.close();
  world = undefined;
  for (const t of temps.splice(0)) t();
});

const bot = (key: string) =>
  `name: remote\nkey: ${key}\npoll: 1s\nrules:\n  - on: message.received\n    do: [{ ` +
  `reply: "remote got {{ event.content }}" }]\n`;

describe('pinbot bots run --server URL', () => {
  it('a bot stopped by a 401 starts again once its file is fixed, as the message says', {
    timeout: 60_000,
  }, async () => {
    world = await createTestWorld({ config: { rate_limits: { enabled: false } }, users: { alice: {}, remote: {} } });
    const tmp = tempDir('pinbot-remote-');
    temps.push(tmp.cleanup);
    const file = join(tmp.dir, 'bots', 'remote.yaml');
    mkdirSync(join(tmp.dir, 'bots'));
    writeFileSync(file, bot('not-a-key'));
    writeFileSync(join(tmp.dir, 'config.yaml'), 'log: { level: info }\n');
    child = spawnNode([
      'bin/pinbot.js',
      'bots',
      'run',
      file,
      '--server',
      world.url,
      '--data',
      join(tmp.dir, 'data'),
      '--config',
      join(tmp.dir, 'config.yaml'),
    ]);
    await child.waitFor(/refused the API key \(401\).*Fix the file and it reloads/);
    writeFileSync(file, bot(world.users.remote!.api_key));
    await child.waitFor(/bot remote reloaded/);
    await child.waitFor(/bot remote running/);
    await world.advance('1s'); // the server's clock is virtual: the message comes after the bot's start
    await world.as('alice').send('remote', 'hello');
    const reply = await eventually(
      async () => (await world!.inbox('alice')).find((m) => m.content === 'remote got hello'),
      20_000,
      'the remote bot to answer',
    );
    expect(reply.sender.id).toBe(world.users.remote!.id);
    expect(child.proc.exitCode).toBeNull();
  });
});
