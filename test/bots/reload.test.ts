import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '../../src/client/client.js';
import { watchBots } from '../../src/runtime/host/watcher.js';
import { botWorld, type BotWorld } from '../helpers/bots.js';
import { eventually } from '../helpers/serve-child.js';

let w: BotWorld;
afterEach(() => w?.close());

const version = (word: string) =>
  `name: echo\nas: Echo\ncreate_user: true\nrules:\n  - id: say\n    on: ` +
  `message.received\n    do:\n      - reply: "${word} {{ event.content }}"\n`;

async function lastMessages(api: Client, n: number): Promise<string[]> {
  const [conv] = (await api.conversations.list()).conversations;
  return (await api.conversations.messages(conv!.id)).messages.slice(-n).map((m) => m.content);
}

describe('hot reload', () => {
  it('swaps in a valid change, keeps the running version when the change is invalid, stops a removed bot', async () => {
    w = await botWorld({ bots: { 'echo.yaml': version('v1') } });
    await w.host.start();
    await w.host.runner('echo')!.started;
    await w.poll('echo');
    const alice = await w.user('Alice');
    const pin = w.botUser('echo').pin_code;
    const say = async (text: string) => {
      await alice.api.messages.send({ recipient_pin: pin, content: text });
      if (w.host.runner('echo')) await w.poll('echo');
    };
    await say('a');
    expect(await lastMessages(alice.api, 1)).toEqual(['v1 a']);

    w.writeBot('echo.yaml', version('v2'));
    const [valid] = await w.host.reload();
    expect(valid).toMatchObject({ name: 'echo', problems: undefined });
    await w.host.runner('echo')!.started;
    await say('b');
    expect(await lastMessages(alice.api, 1)).toEqual(['v2 b']);

    w.writeBot('echo.yaml', version('v3').replace('reply:', 'replay:'));
    const [invalid] = await w.host.reload();
    expect(invalid).toMatchObject({
      name: 'echo',
      status: 'running',
      message: 'running the previous version; the file has problems',
    });
    expect(invalid!.problems![0]).toMatch(
      /echo\.yaml:8:9: rules\.0\.do\.0\.replay: unknown action "replay" — did you mean "reply"\?/,
    );
    await say('c');
    expect(await lastMessages(alice.api, 1)).toEqual(['v2 c']);

    w.removeBot('echo.yaml');
    expect(await w.host.reload()).toEqual([]);
    expect(w.host.runner('echo')).toBeUndefined();
    await say('d');
    expect(await lastMessages(alice.api, 2)).toEqual(['v2 c', 'd']);
  });

  it('an event seen by the old version is finished by the new one, not lost or doubled', async () => {
    w = await botWorld({ bots: { 'echo.yaml': version('v1').replace('    do:\n', '    do:\n      - wait: 1h\n') } });
    await w.host.start();
    await w.host.runner('echo')!.started;
    await w.poll('echo');
    const alice = await w.user('Alice');
    await alice.api.messages.send({ recipient_pin: w.botUser('echo').pin_code, content: 'x' });
    await w.poll('echo'); // the run waits for an hour of bot time
    w.writeBot('echo.yaml', version('v2'));
    await w.host.reload();
    await w.host.runner('echo')!.idle();
    expect(await lastMessages(alice.api, 2)).toEqual(['x', 'v2 x']);
    await w.poll('echo');
    expect(await lastMessages(alice.api, 2)).toEqual(['x', 'v2 x']);
  });

  it('the folder watcher reloads on its own when a file changes', async () => {
    w = await botWorld({ bots: { 'echo.yaml': version('v1') } });
    await w.host.start();
    const first = w.host.status()[0]!.version;
    const stop = watchBots(w.botsDir, () => void w.host.reload(), 50);
    try {
      w.writeBot('echo.yaml', version('v2'));
      await eventually(() => w.host.status()[0]!.version !== first, 10_000, 'the watcher to reload');
      w.writeBot('other.yaml', version('v9').replace('name: echo', 'name: other').replace('as: Echo', 'as: Other'));
      await eventually(() => w.host.status().length === 2, 10_000, 'the new file to start');
    } finally {
      stop();
    }
  });
});
