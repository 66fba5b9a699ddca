import { afterEach, describe, expect, it } from 'vitest';
import { botWorld, T0, type BotWorld } from '../helpers/bots.js';

let w: BotWorld;
afterEach(() => w?.close());

const payer = (alicePin: string) => `name: payer
as: Payer
create_user: true
limits: { max_per_transfer: 5, max_per_day: 8, send_to: [${alicePin}] }
rules:
  - id: pay
    on: message.received
    if: { content: { matches: "^pay \\\\d+(\\\\.\\\\d+)?$" } }
    do:
      - send_money: { to: "{{ event.sender.pin_code }}", amount: "{{ event.content | remove: 'pay ' }}", note: "as asked" }
      - reply: "paid {{ steps[0].transaction.amount }}"
`;

async function setup() {
  w = await botWorld();
  const alice = await w.user('Alice');
  const bob = await w.user('Bob');
  w.writeBot('payer.yaml', payer(alice.user.pin_code));
  await w.host.start();
  await w.host.runner('payer')!.started;
  await w.poll('payer');
  const pin = w.botUser('payer').pin_code;
  return { alice, bob, pin };
}

const outcomes = () =>
  w.host
    .traces('payer')!
    .map((t) => `${t.outcome}${t.reason ? `:${t.reason}` : ''}${t.message ? ` ${t.message}` : ''}`);

describe('money guardrails', () => {
  it('max_per_transfer, max_per_day (by UTC day of the bot clock) and the send_to allow-list', async () => {
    const { alice, bob, pin } = await setup();
    const { grantMoney } = await import('../../src/domain/wallet/grants.js');
    await w.server.store.transaction((tx) => grantMoney(tx, w.server.env, w.botUser('payer').id, 10_000));
    for (const text of ['pay 3', 'pay 6', 'pay 4', 'pay 2'])
      await alice.api.messages.send({ recipient_pin: pin, content: text });
    w.clock.set(T0 + 1000);
    await bob.api.messages.send({ recipient_pin: pin, content: 'pay 1' });
    await w.poll('payer');
    // in server time order, round robin by sender once runs queue up: Bob's comes after Alice's second
    expect(outcomes()).toEqual([
      'done',
      'failed:limit step 1 (send_money) failed: 6.00 is more than limits.max_per_transfer (5.00)',
      `failed:limit step 1 (send_money) failed: ${bob.user.pin_code} is not in limits.send_to`,
      'done',
      'failed:limit step 1 (send_money) failed: the daily cap of 8.00 would be passed (7.00 sent today)',
    ]);
    const received = async () => (await alice.api.wallet.pending()).pending_transactions.map((t) => t.amount);
    expect(await received()).toEqual([4, 3]);
    w.clock.set(T0 + 86_400_000); // the next UTC day
    await alice.api.messages.send({ recipient_pin: pin, content: 'pay 2' });
    await w.poll('payer');
    expect(outcomes().at(-1)).toBe('done');
    expect(await received()).toEqual([2, 4, 3]);
  });

  it('a transfer the server refuses (insufficient funds) does not count against the daily cap', async () => {
    const { alice, pin } = await setup();
    await alice.api.messages.send({ recipient_pin: pin, content: 'pay 5' });
    await w.poll('payer');
    expect(outcomes()).toEqual([
      expect.stringMatching(/^failed:api step 1 \(send_money\) failed: POST \/wallet\/send → 400 insufficient_funds: /),
    ]);
    const { grantMoney } = await import('../../src/domain/wallet/grants.js');
    await w.server.store.transaction((tx) => grantMoney(tx, w.server.env, w.botUser('payer').id, 1000));
    await alice.api.messages.send({ recipient_pin: pin, content: 'pay 5' });
    await alice.api.messages.send({ recipient_pin: pin, content: 'pay 3' });
    await w.poll('payer');
    expect(outcomes().slice(1)).toEqual(['done', 'done']);
    const { BotState } = await import('../../src/runtime/state/bot-state.js');
    expect(new BotState(w.server.store, 'payer').meta().spend).toEqual({ date: '2026-11-21', cents: 800 });
  });
});

describe('transfer.accepted, transfer.declined, balance.changed', () => {
  it('are raised once each, as the recipient answers and the balance moves', async () => {
    w = await botWorld();
    const alice = await w.user('Alice');
    w.writeBot(
      'watcher.yaml',
      `name: watcher\nas: Watcher\ncreate_user: true\nrules:\n` +
        (`  - on: [transfer.accepted, transfer.declined]\n    do:\n      - reply: "{{ ` +
          `event.type }} {{ event.amount }}"\n`) +
        (`  - on: balance.changed\n    do:\n      - log: "balance {{ event.previous ` +
          `}} -> {{ event.balance }} ({{ event.delta }})"\n`),
    );
    await w.host.start();
    await w.host.runner('watcher')!.started;
    const me = w.botUser('watcher');
    // the baseline (0), read before the grant: the bot's first poll may come before or after
    // it (an embedded bot's requests are served in process, at once), so the test makes it come first
    await w.poll('watcher');
    const { grantMoney } = await import('../../src/domain/wallet/grants.js');
    await w.server.store.transaction((tx) => grantMoney(tx, w.server.env, me.id, 1000));
    await w.poll('watcher');
    const { createKey } = await import('../../src/domain/users/keys.js');
    const { createClient } = await import('../../src/client/client.js');
    const key = await w.server.store.transaction((tx) => createKey(tx, w.server.env, me.id));
    const bot = createClient({ baseUrl: w.server.url, apiKey: key.api_key });
    const t1 = await bot.wallet.send({ recipient_pin: alice.user.pin_code, amount: 1 });
    const t2 = await bot.wallet.send({ recipient_pin: alice.user.pin_code, amount: 2 });
    await w.poll('watcher');
    await alice.api.wallet.accept(t1.transaction.id);
    await alice.api.wallet.decline(t2.transaction.id);
    await w.poll('watcher');
    await w.poll('watcher');
    const [conv] = (await alice.api.conversations.list()).conversations;
    expect((await alice.api.conversations.messages(conv!.id)).messages.map((m) => m.content)).toEqual([
      'transfer.accepted 1',
      'transfer.declined 2',
    ]);
    const logs = w.host
      .traces('watcher')!
      .filter((t) => t.event.type === 'balance.changed')
      .map((t) => t.steps[0]!.result);
    expect(logs).toEqual([
      { message: 'balance 0 -> 10 (10)' },
      { message: 'balance 10 -> 7 (-3)' },
      { message: 'balance 7 -> 9 (2)' },
    ]);
  });
});
