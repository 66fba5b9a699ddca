import { afterEach, describe, expect, it } from 'vitest';
import { createKey, revokeKey } from '../../src/domain/users/keys.js';
import { botWorld, type BotWorld } from '../helpers/bots.js';

let w: BotWorld;
afterEach(() => w?.close());

const echo = (name: string, identity: string) =>
  `name: ${name}\n${identity}\npoll: 1s\nrules:\n  - on: message.received\n    do:\n ` +
  `     - reply: "${name} heard {{ event.content }}"\n`;

describe('bots are isolated', () => {
  it('a 401 stops that bot only, and says why', async () => {
    const env: NodeJS.ProcessEnv = {};
    w = await botWorld({ host: { env } });
    const keyed = await w.user('Keyed');
    const alice = await w.user('Alice');
    const key = await w.server.store.transaction((tx) => createKey(tx, w.server.env, keyed.user.id));
    env.PINBOT_KEY_A = key.api_key;
    w.writeBot('a.yaml', echo('a', 'key: ${env:PINBOT_KEY_A}'));
    w.writeBot('b.yaml', echo('b', 'as: Bee\ncreate_user: true'));
    await w.host.start();
    await w.poll('a');
    await w.poll('b');
    await w.server.store.transaction((tx) => revokeKey(tx, w.server.env, key.id));
    await w.poll('a');
    expect(w.host.status().find((s) => s.name === 'a')).toMatchObject({
      status: 'failed',
      message: expect.stringContaining('the server refused the API key (401)'),
    });
    await alice.api.messages.send({ recipient_pin: w.botUser('b').pin_code, content: 'still there?' });
    await w.poll('b');
    const [conv] = (await alice.api.conversations.list()).conversations;
    expect((await alice.api.conversations.messages(conv!.id)).messages.map((m) => m.content)).toEqual([
      'still there?',
      'b heard still there?',
    ]);
    expect(w.host.status().find((s) => s.name === 'b')).toMatchObject({ status: 'running' });
  });

  it('a bot whose user does not exist waits and says how to fix it; it starts once the user exists', async () => {
    w = await botWorld({ bots: { 'c.yaml': echo('c', 'as: Nobody Yet') } });
    const [status] = await w.host.start();
    expect(status).toMatchObject({ name: 'c' });
    await w.host.runner('c')!.started;
    expect(w.host.status()[0]).toMatchObject({
      status: 'waiting',
      message:
        'no user "Nobody Yet" on this server. Create it with `pinbot users add --name ' +
        '"Nobody Yet"`, or add create_user: true to the bot file',
    });
    await w.user('Nobody Yet');
    // it looks again after its poll interval (then doubling): on the virtual clock, a minute later
    await w.clock.advance(60_000);
    expect(w.host.status()[0]!.status).toBe('running');
  });

  it('invalid files are reported while the valid ones start', async () => {
    w = await botWorld({
      bots: {
        'good.yaml': echo('good', 'as: Good\ncreate_user: true'),
        'bad.yaml': echo('bad', 'as: Bad').replace('reply:', 'rply:'),
      },
    });
    const report = await w.host.start();
    expect(report.map((r) => [r.file.split('/').pop(), r.status])).toEqual([
      ['bad.yaml', 'invalid'],
      ['good.yaml', 'starting'],
    ]);
    expect(report[0]!.problems![0]).toMatch(
      /bad\.yaml:7:9: rules\.0\.do\.0\.rply: unknown action "rply" — did you mean "reply"\?$/,
    );
    await w.host.runner('good')!.started;
    expect(w.host.status()[1]!.status).toBe('running');
  });
});
