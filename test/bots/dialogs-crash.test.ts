import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callAdmin } from '../../src/admin/socket.js';
import { createClient, type Client } from '../../src/client/client.js';
import type { BotStatus } from '../../src/runtime/host/bot-host.js';
import { tempDir } from '../helpers/api.js';
import { ASKING_PLUGIN, PLUGIN_RULE } from '../helpers/asking-plugin.js';
import { eventually, spawnServe, type ServeChild } from '../helpers/serve-child.js';

/** Dialogs across kill -9, and a dialog's timeout on the real clock (a real `pinbot serve`). */

const children: ServeChild[] = [];
const temps: Array<() => void> = [];
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.proc.exitCode === null && c.proc.signalCode === null) {
      c.proc.kill('SIGKILL');
      await c.exited;
    }
  }
  for (const t of temps.splice(0)) t();
});

const SHOP = `name: shop
as: Shop
create_user: true
poll: 1s
rules:
  - id: order
    on: message.received
    if: { content: { matches: "^order$" } }
    do:
      - ask: { question: "What size?", save: size, expect: { choice: [small, large] } }
      - ask: { question: "How many?", save: count, expect: { number: { min: 1, max: 9 } } }
      - ask: { question: "Confirm {{ answers.count }} {{ answers.size }}?", save: ok, expect: yes_no }
      - reply: "Ordered {{ answers.count }} {{ answers.size }}: {{ answers.ok }}"
  - id: quick
    on: message.received
    if: { content: { matches: "^quick$" } }
    do:
      - ask: { question: "Quick, a number?", expect: number, timeout: 2s }
      - reply: "thanks"
    on_timeout: [ { reply: "too slow" } ]
`;

function setup(o: { plugin?: boolean } = {}) {
  const tmp = tempDir('pinbot-dialog-');
  temps.push(tmp.cleanup);
  const data = join(tmp.dir, 'data');
  const bots = join(tmp.dir, 'bots');
  mkdirSync(bots);
  writeFileSync(join(bots, 'shop.yaml'), SHOP + (o.plugin ? PLUGIN_RULE : ''));
  const plugins = join(tmp.dir, 'plugins');
  mkdirSync(plugins);
  if (o.plugin) writeFileSync(join(plugins, 'porder.mjs'), ASKING_PLUGIN);
  const config = join(tmp.dir, 'config.yaml');
  writeFileSync(
    config,
    `rate_limits: { enabled: false }\nbots: { dir: ${JSON.stringify(bots)} ` +
      `}\nplugins: { dir: ${JSON.stringify(plugins)} }\nruntime: { safety_poll: 1s ` +
      `}\nlog: { level: info }\n`,
  );
  return { data, args: ['--data', data, '--config', config] };
}

async function shopPin(data: string): Promise<string> {
  const bot = await eventually(
    async () => {
      const { bots } = (await callAdmin(data, 'bots.status')) as { bots: BotStatus[] };
      return bots.find((b) => b.name === 'shop' && b.status === 'running' && b.last_poll);
    },
    40_000,
    'the shop bot to run',
  );
  return /\(([A-Z0-9]{6})\)/.exec(bot.message ?? '')![1]!;
}

/** What the shop said to `api`'s user, in order. */
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

describe('dialogs across kill -9', () => {
  it('killed right after the second question went out (before it was recorded): the ' +
    'answer continues with the earlier answer, nothing twice', {
    timeout: 150_000,
  }, async () => {
    const s = setup();
    const first = await spawnServe(s.args, { PINBOT_CRASH_AT: 'after-action:shop:order:1', PINBOT_FROM_SOURCE: '1' });
    children.push(first);
    const pin = await shopPin(s.data);
    const alice = (await callAdmin(s.data, 'users.add', { name: 'Alice' })) as { api_key: string };
    let api = createClient({ baseUrl: first.url, apiKey: alice.api_key });
    await api.messages.send({ recipient_pin: pin, content: 'order' });
    await said(api, 1);
    await api.messages.send({ recipient_pin: pin, content: 'large' });
    expect(await first.exited).toMatchObject({ signal: 'SIGKILL' });

    const second = await spawnServe(s.args, { PINBOT_FROM_SOURCE: '1' });
    children.push(second);
    api = createClient({ baseUrl: second.url, apiKey: alice.api_key });
    await shopPin(s.data);
    expect(await heard(api)).toEqual(['What size?', 'How many?']);
    const { dialogs } = (await callAdmin(s.data, 'bots.dialogs', { name: 'shop' })) as {
      dialogs: Array<{ person: string; rule: string; step: number }>;
    };
    expect(dialogs).toMatchObject([{ person: expect.stringContaining('Alice'), rule: 'order', step: 1 }]);
    await api.messages.send({ recipient_pin: pin, content: '3' });
    await said(api, 3);
    // the answer sent twice: the second "yes" is an ordinary message once the dialog ended
    await api.messages.send({ recipient_pin: pin, content: 'yes' });
    await api.messages.send({ recipient_pin: pin, content: 'yes' });
    await said(api, 4);
    await new Promise((r) => setTimeout(r, 2500)); // a few more polls: nothing more may come of it
    expect(await heard(api)).toEqual(['What size?', 'How many?', 'Confirm 3 large?', 'Ordered 3 large: true']);
  });

  it('kill -9 while a plugin action waits in ctx.ask: the answer continues it, its earlier effects are not repeated', {
    timeout: 150_000,
  }, async () => {
    const s = setup({ plugin: true });
    // killed right after the first question went out, before that was written
    const first = await spawnServe(s.args, { PINBOT_CRASH_AT: 'after-action:shop:porder:0', PINBOT_FROM_SOURCE: '1' });
    children.push(first);
    const pin = await shopPin(s.data).catch((e) => {
      console.log(
        first.lines
          .filter((l) => /error|warn|fail|plugin/i.test(l))
          .join('\n')
          .slice(0, 4000),
      );
      throw e;
    });
    const alice = (await callAdmin(s.data, 'users.add', { name: 'Alice' })) as { api_key: string };
    let api = createClient({ baseUrl: first.url, apiKey: alice.api_key });
    await api.messages.send({ recipient_pin: pin, content: 'porder' });
    expect(await first.exited).toMatchObject({ signal: 'SIGKILL' });

    const second = await spawnServe(s.args, { PINBOT_FROM_SOURCE: '1' });
    children.push(second);
    api = createClient({ baseUrl: second.url, apiKey: alice.api_key });
    await shopPin(s.data);
    await said(api, 2);
    const { dialogs } = (await callAdmin(s.data, 'bots.dialogs', { name: 'shop' })) as {
      dialogs: Array<{ rule: string; step: number; question?: string }>;
    };
    expect(dialogs).toMatchObject([{ rule: 'porder', step: 0, question: 'What size?' }]);
    // the gauge of waiting dialogs, served at GET /metrics (loopback: no token)
    const gauge = async () =>
      /^pinbot_bot_dialogs_waiting\{bot="shop"\} (\d+)$/m.exec(
        await (await fetch(`${second.url}/metrics`)).text(),
      )?.[1];
    expect(await gauge()).toBe('1');
    await api.messages.send({ recipient_pin: pin, content: 'large' });
    await said(api, 3);
    // killed while it waits for the second answer
    second.proc.kill('SIGKILL');
    await second.exited;

    const third = await spawnServe(s.args, { PINBOT_FROM_SOURCE: '1' });
    children.push(third);
    api = createClient({ baseUrl: third.url, apiKey: alice.api_key });
    await shopPin(s.data);
    await api.messages.send({ recipient_pin: pin, content: '3' });
    await api.messages.send({ recipient_pin: pin, content: '3' }); // the answer sent twice
    await said(api, 4);
    await new Promise((r) => setTimeout(r, 2500)); // a few more polls: nothing more may come of it
    expect(await heard(api)).toEqual(['Welcome', 'What size?', 'How many large?', 'Ordered 3 large (order 1)']);
  });

  it('a timeout fires by itself on the real clock, with no further message', { timeout: 90_000 }, async () => {
    const s = setup();
    const child = await spawnServe(s.args, { PINBOT_FROM_SOURCE: '1' });
    children.push(child);
    const pin = await shopPin(s.data);
    const alice = (await callAdmin(s.data, 'users.add', { name: 'Alice' })) as { api_key: string };
    const api = createClient({ baseUrl: child.url, apiKey: alice.api_key });
    await api.messages.send({ recipient_pin: pin, content: 'quick' });
    expect(await said(api, 2)).toEqual(['Quick, a number?', 'too slow']);
  });
});
