import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { callAdmin } from '../../src/admin/socket.js';
import { createClient, type Client } from '../../src/client/client.js';
import type { BotStatus } from '../../src/runtime/host/bot-host.js';
import { tempDir } from '../helpers/api.js';
import { ASKING_PLUGIN, PLUGIN_RULE } from '../helpers/asking-plugin.js';
import { testDatabase } from '../helpers/pg-db.js';
import { eventually, killAll, spawnServe, type ServeChild } from '../helpers/serve-child.js';

/**
 * Dialogs on PostgreSQL: the dialog, its answers and its deadline live in the database, so
 * when the process running the bot is killed -9, the process that takes the bot's lease over
 * continues the dialog; a timeout fires there by itself (real clock).
 */

const children: ServeChild[] = [];
const temps: Array<() => void> = [];
afterAll(async () => {
  await killAll(children);
  for (const t of temps) t();
});

const BOT = `name: shop
as: Shop
create_user: true
poll: 1s
rules:
  - id: order
    on: message.received
    if: { content: { matches: "^order$" } }
    do:
      - ask: { question: "What size?", save: size, expect: { choice: [small, large] } }
      - ask: { question: "How many?", save: count, expect: number }
      - reply: "Ordered {{ answers.count }} {{ answers.size }}"
  - id: quick
    on: message.received
    if: { content: { matches: "^quick$" } }
    do:
      - ask: { question: "Quick?", expect: yes_no, timeout: 2s }
    on_timeout: [ { reply: "too slow" } ]
`;

async function heard(api: Client): Promise<string[]> {
  const [conv] = (await api.conversations.list()).conversations;
  if (!conv) return [];
  return (await api.conversations.messages(conv.id)).messages
    .filter((m) => m.sender.display_name === 'Shop')
    .map((m) => m.content);
}
const said = (api: Client, n: number) =>
  eventually(
    async () => ((await heard(api)).length >= n ? heard(api) : undefined),
    40_000,
    `${n} messages from the shop`,
  );

/** The bot of the server on `data`, once it runs and has polled (its status line has its PIN). */
function runningBot(data: string): Promise<BotStatus> {
  return eventually(
    async () =>
      ((await callAdmin(data, 'bots.status')) as { bots: BotStatus[] }).bots.find(
        (b) => b.status === 'running' && b.last_poll,
      ),
    40_000,
    'the bot to run',
  );
}
describe('dialogs on PostgreSQL', () => {
  it('kill -9 of the process running the bot mid-dialog: the next one continues it with ' +
    'its answers; a timeout fires by itself', {
    timeout: 150_000,
  }, async () => {
    const url = await testDatabase();
    const tmp = tempDir('pinbot-dialog-pg-');
    temps.push(tmp.cleanup);
    const bots = join(tmp.dir, 'bots');
    mkdirSync(bots);
    writeFileSync(join(bots, 'shop.yaml'), BOT);
    const config = join(tmp.dir, 'config.yaml');
    writeFileSync(
      config,
      `store:\n  driver: postgres\n  url: \${env:DATABASE_URL}\nrate_limits:\n  ` +
        `enabled: false\nbots:\n  dir: ${JSON.stringify(bots)}\n  lease_ttl: ` +
        `2s\nruntime: { safety_poll: 1s }\nlog:\n  level: info\n`,
    );
    const start = async (i: number) => {
      const c = await spawnServe(['--data', join(tmp.dir, `data${i}`), '--config', config], { DATABASE_URL: url });
      children.push(c);
      return { c, data: join(tmp.dir, `data${i}`) };
    };
    const p1 = await start(1);
    const bot = await runningBot(p1.data);
    const pin = /\(([A-Z0-9]{6})\)/.exec(bot.message ?? '')![1]!;
    const keys = await Promise.all(
      ['Alice', 'Bob'].map(
        async (name) => ((await callAdmin(p1.data, 'users.add', { name })) as { api_key: string }).api_key,
      ),
    );
    const alice = createClient({ baseUrl: p1.c.url, apiKey: keys[0]! });
    await alice.messages.send({ recipient_pin: pin, content: 'order' });
    await said(alice, 1).catch((e) => {
      console.log(
        p1.c.lines
          .filter((l) => /error|warn|shop|fail/i.test(l))
          .join('\n')
          .slice(0, 6000),
      );
      throw e;
    });
    await alice.messages.send({ recipient_pin: pin, content: 'large' });
    await said(alice, 2);
    p1.c.proc.kill('SIGKILL');
    await p1.c.exited;

    // the second process takes the lease over once it expires; the dialog waits in the database
    const p2 = await start(2);
    await runningBot(p2.data);
    const alice2 = createClient({ baseUrl: p2.c.url, apiKey: keys[0]! });
    const { dialogs } = (await callAdmin(p2.data, 'bots.dialogs', { name: 'shop' })) as {
      dialogs: Array<{ pin: string; rule: string; step: number }>;
    };
    expect(dialogs).toMatchObject([{ rule: 'order', step: 1 }]);
    await alice2.messages.send({ recipient_pin: pin, content: '2' });
    expect(await said(alice2, 3)).toEqual(['What size?', 'How many?', 'Ordered 2 large']);

    // bob never answers: his timeout fires by itself
    const bob = createClient({ baseUrl: p2.c.url, apiKey: keys[1]! });
    await bob.messages.send({ recipient_pin: pin, content: 'quick' });
    expect(await said(bob, 2)).toEqual(['Quick?', 'too slow']);
    expect(((await callAdmin(p2.data, 'bots.dialogs', { name: 'shop' })) as { dialogs: unknown[] }).dialogs).toEqual(
      [],
    );
  });

  it('a plugin action waiting in ctx.ask, with ctx.state: kill -9 of its process, the next one continues it', {
    timeout: 150_000,
  }, async () => {
    const url = await testDatabase();
    const tmp = tempDir('pinbot-dialog-pg-plugin-');
    temps.push(tmp.cleanup);
    const bots = join(tmp.dir, 'bots');
    const plugins = join(tmp.dir, 'plugins');
    mkdirSync(bots);
    mkdirSync(plugins);
    writeFileSync(join(bots, 'shop.yaml'), BOT + PLUGIN_RULE);
    writeFileSync(join(plugins, 'porder.mjs'), ASKING_PLUGIN);
    const config = join(tmp.dir, 'config.yaml');
    writeFileSync(
      config,
      `store:\n  driver: postgres\n  url: \${env:DATABASE_URL}\nrate_limits:\n  ` +
        `enabled: false\nbots:\n  dir: ${JSON.stringify(bots)}\n  lease_ttl: ` +
        `2s\nplugins:\n  dir: ${JSON.stringify(plugins)}\nruntime: { safety_poll: 1s ` +
        `}\nlog:\n  level: info\n`,
    );
    const start = async (i: number) => {
      const c = await spawnServe(['--data', join(tmp.dir, `data${i}`), '--config', config], {
        DATABASE_URL: url,
        PINBOT_FROM_SOURCE: '1',
      });
      children.push(c);
      return { c, data: join(tmp.dir, `data${i}`) };
    };
    const p1 = await start(1);
    const bot = await runningBot(p1.data);
    const pin = /\(([A-Z0-9]{6})\)/.exec(bot.message ?? '')![1]!;
    const key = ((await callAdmin(p1.data, 'users.add', { name: 'Alice' })) as { api_key: string }).api_key;
    const alice = createClient({ baseUrl: p1.c.url, apiKey: key });
    await alice.messages.send({ recipient_pin: pin, content: 'porder' });
    await said(alice, 2);
    await alice.messages.send({ recipient_pin: pin, content: 'small' });
    await said(alice, 3);
    p1.c.proc.kill('SIGKILL');
    await p1.c.exited;

    const p2 = await start(2);
    await runningBot(p2.data);
    const alice2 = createClient({ baseUrl: p2.c.url, apiKey: key });
    const { dialogs } = (await callAdmin(p2.data, 'bots.dialogs', { name: 'shop' })) as {
      dialogs: Array<{ rule: string; question?: string }>;
    };
    expect(dialogs).toMatchObject([{ rule: 'porder', question: 'How many small?' }]);
    await alice2.messages.send({ recipient_pin: pin, content: '4' });
    // ctx.state works on PostgreSQL (its record ids hold no NUL)
    expect(await said(alice2, 4)).toEqual(['Welcome', 'What size?', 'How many small?', 'Ordered 4 small (order 1)']);
  });
});
