import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '../../src/client/client.js';
import { botWorld, type BotWorld } from '../helpers/bots.js';

let w: BotWorld;
afterEach(() => w?.close());

const example = (name: string) => readFileSync(join(import.meta.dirname, '../../bots', `${name}.yaml`), 'utf8');

/** Starts one shipped example against a fresh embedded server and takes its baseline poll. */
async function start(name: string) {
  w = await botWorld({ bots: { [`${name}.yaml`]: example(name) } });
  await w.host.start();
  await w.host.runner(name)!.started;
  await w.poll(name);
  return w.botUser(name);
}

async function conversationWith(api: Client, userId: string): Promise<string[]> {
  const conv = (await api.conversations.list()).conversations.find((c) => c.participants.some((p) => p.id === userId));
  if (!conv) return [];
  return (await api.conversations.messages(conv.id)).messages.map((m) => `${m.sender.display_name}: ${m.content}`);
}

describe('shipped example bots, against the embedded server', () => {
  it(
    'faq answers keywords in the conversation, and the "human" answer at most once an ' + 'hour to one customer',
    async () => {
      const faq = await start('faq');
      const alice = await w.user('Alice');
      for (const q of [
        'What are your opening hours?',
        'How much is a coffee?',
        'Can I talk to a human?',
        'A HUMAN please',
        'nice weather',
      ]) {
        await alice.api.messages.send({ recipient_pin: faq.pin_code, content: q });
      }
      await w.poll('faq');
      expect(await conversationWith(alice.api, faq.id)).toEqual([
        'Alice: What are your opening hours?',
        'Alice: How much is a coffee?',
        'Alice: Can I talk to a human?',
        'Alice: A HUMAN please',
        'Alice: nice weather',
        'FAQ: We are open Monday to Friday, 9:00 to 17:00 (UTC).',
        'FAQ: A coffee is 2.50 and a cake 3.00.',
        'FAQ: I am a bot. Write to the shop owner directly for anything else.',
      ]);
      const human = w.host
        .traces('faq')!
        .filter((t) => t.rule === 'human')
        .map((t) => t.reason ?? t.outcome);
      expect(human).toEqual(['condition_false', 'condition_false', 'done', 'cooldown', 'condition_false']);
    },
  );

  it('faq hands over to a human once an hour per customer: a second customer asking is answered too', async () => {
    const faq = await start('faq');
    const alice = await w.user('Alice');
    const bob = await w.user('Bob');
    await alice.api.messages.send({ recipient_pin: faq.pin_code, content: 'Can I talk to a human?' });
    await bob.api.messages.send({ recipient_pin: faq.pin_code, content: 'I want a person' });
    await w.poll('faq');
    expect(await conversationWith(bob.api, faq.id)).toEqual([
      'Bob: I want a person',
      'FAQ: I am a bot. Write to the shop owner directly for anything else.',
    ]);
    expect(await conversationWith(alice.api, faq.id)).toContain(
      'FAQ: I am a bot. Write to the shop owner directly for anything else.',
    );
  });

  it('greeter accepts contact requests and introductions and says hello', async () => {
    const greeter = await start('greeter');
    const alice = await w.user('Alice');
    const bob = await w.user('Bob');
    const carol = await w.user('Carol');
    await alice.api.contacts.request({ pin_code: greeter.pin_code });
    await w.poll('greeter');
    expect((await alice.api.contacts.check(greeter.pin_code)).is_contact).toBe(true);
    expect(await conversationWith(alice.api, greeter.id)).toEqual([
      'Greeter: Hello Alice, nice to meet you! I am Greeter.',
    ]);

    const intro = await bob.api.introductions.create({
      participant_pins: [greeter.pin_code, carol.user.pin_code],
      message: 'you two',
    });
    await w.poll('greeter'); // accepts; the introduction waits for Carol
    expect((await carol.api.introductions.pending()).introductions.map((i) => i.id)).toEqual([intro.id]);
    await carol.api.introductions.accept(intro.id);
    await w.poll('greeter'); // completed: hello in the new conversation
    expect(await conversationWith(carol.api, greeter.id)).toEqual([
      'Greeter: Hello everyone! Bob thought we should talk.',
    ]);
    expect(w.host.traces('greeter')!.map((t) => [t.rule, t.outcome])).toEqual([
      ['accept-contacts', 'done'],
      ['accept-introductions', 'done'],
      ['hello-introduced', 'done'],
    ]);
  });
});

describe('shipped money examples', () => {
  it('tip-jar accepts tips up to 10 with a thank-you, and declines larger ones with a note', async () => {
    const jar = await start('tip-jar');
    const bob = await w.user('Bob', 100);
    const small = await bob.api.wallet.send({ recipient_pin: jar.pin_code, amount: 5, note: 'coffee' });
    const big = await bob.api.wallet.send({ recipient_pin: jar.pin_code, amount: 50 });
    await w.poll('tip-jar');
    const status = async (id: string) =>
      (await bob.api.wallet.transactions()).transactions.find((t) => t.id === id)!.status;
    expect(await status(small.transaction.id)).toBe('accepted');
    expect(await status(big.transaction.id)).toBe('declined');
    expect((await bob.api.wallet.balance()).balance).toBe(95);
    expect(await conversationWith(bob.api, jar.id)).toEqual([
      'Tip Jar: Thank you Bob for the tip of 5!',
      'Tip Jar: That is very generous, Bob, but this jar only takes tips up to 10. Your 50 is on its way back.',
    ]);
    const { BotState } = await import('../../src/runtime/state/bot-state.js');
    expect(new BotState(w.server.store, 'tip-jar').meta().vars).toEqual({ tips: 1 });
  });

  it('refunder declines small change from strangers and leaves the rest alone', async () => {
    const refunder = await start('refunder');
    const stranger = await w.user('Stranger', 10);
    const friend = await w.user('Friend', 10);
    // Friend and the refunder are contacts
    const req = await friend.api.contacts.request({ pin_code: refunder.pin_code });
    const { createKey } = await import('../../src/domain/users/keys.js');
    const { createClient } = await import('../../src/client/client.js');
    const key = await w.server.store.transaction((tx) => createKey(tx, w.server.env, refunder.id));
    await createClient({ baseUrl: w.server.url, apiKey: key.api_key }).contacts.acceptRequest(req.id);
    const a = await stranger.api.wallet.send({ recipient_pin: refunder.pin_code, amount: 0.5 });
    const b = await stranger.api.wallet.send({ recipient_pin: refunder.pin_code, amount: 5 });
    const c = await friend.api.wallet.send({ recipient_pin: refunder.pin_code, amount: 0.5 });
    await w.poll('refunder');
    const statusOf = async (api: Client, id: string) =>
      (await api.wallet.transactions()).transactions.find((t) => t.id === id)!.status;
    expect([
      await statusOf(stranger.api, a.transaction.id),
      await statusOf(stranger.api, b.transaction.id),
      await statusOf(friend.api, c.transaction.id),
    ]).toEqual(['declined', 'pending', 'pending']);
    expect((await stranger.api.wallet.balance()).balance).toBe(5);
    expect(await conversationWith(stranger.api, refunder.id)).toEqual([
      'Refunder: I do not accept small change from people I do not know, Stranger. Your 0.5 has been returned.',
    ]);
    const why = w.host
      .traces('refunder')!
      .map((t) => [t.event.summary.split(' from ')[1]?.split(' (')[0], t.event.summary.split(' ')[1], t.outcome]);
    expect(why).toEqual([
      ['Stranger', '0.5', 'done'],
      ['Stranger', '5', 'not_run'],
      ['Friend', '0.5', 'not_run'],
    ]);
  });
});
