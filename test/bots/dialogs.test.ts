import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestWorld, type TestWorld } from '../../src/testing/world.js';

/** Dialogs (`ask`, issue 29): asking, routing the answers, timeouts, cancel words, attempts. */

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const PIZZA = `name: pizza
as: pizza
limits: { max_per_transfer: 10, max_per_day: 50 }
rules:
  - id: order
    on: message.received
    if: { content: { matches: "^order$", flags: i } }
    cancel_words: [cancel, stop]
    do:
      - ask:
          question: "What size? small, medium or large"
          save: size
          expect: { choice: [small, medium, large] }
          retry: "Please answer small, medium or large"
          attempts: 2
          timeout: 10m
      - ask: { question: "How many?", save: count, expect: { number: { min: 1, max: 10 } } }
      - ask: { question: "Confirm {{ answers.count }} {{ answers.size }}? yes or no", save: ok, expect: yes_no }
      - choose:
          - if: { liquid: "answers.ok" }
            do: [ { reply: "Ordered {{ answers.count }} {{ answers.size }}" } ]
          - else: [ { reply: "Not ordered" } ]
    on_cancel: [ { reply: "Order cancelled" } ]
    on_timeout: [ { reply: "No answer, order dropped" } ]
    on_error: [ { reply: "Sorry: {{ error.code }}" } ]
  - id: echo
    on: message.received
    if: { not: { content: { matches: "^order$", flags: i } } }
    do: [ { reply: "echo {{ event.content }}" } ]
`;

const said = async (name: string) => (await world!.inbox(name)).map((m) => m.content);
const reasons = (bot: string) =>
  world!.traces(bot).map((t) => `${t.rule}: ${t.outcome}${t.reason ? ` ${t.reason}` : ''}`);

async function pizza(users: string[] = ['alice']) {
  world = await createTestWorld({ users: Object.fromEntries([...users, 'pizza'].map((u) => [u, {}])) });
  await world.addBot(PIZZA);
  return world;
}

/** Rewrites the bot's file and reloads it (the world's first bot is bot-1.yaml). */
async function reload(text: string) {
  writeFileSync(join(world!.botsDir, 'bot-1.yaml'), text);
  await world!.host.reload();
  await world!.host.runner('pizza')!.started;
  await world!.settle();
}

async function say(name: string, text: string) {
  await world!.as(name).send('pizza', text);
  await world!.settle();
}

describe('ask: a dialog of three questions', () => {
  it(
    'asks, waits, saves each answer; no other rule runs on the answers; after it, a ' + 'message is plain again',
    async () => {
      await pizza();
      await say('alice', 'order');
      expect(await said('alice')).toEqual(['What size? small, medium or large']);
      await say('alice', 'LARGE');
      await say('alice', '2');
      await say('alice', 'yes');
      expect(await said('alice')).toEqual([
        'What size? small, medium or large',
        'How many?',
        'Confirm 2 large? yes or no',
        'Ordered 2 large',
      ]);
      const answered = world!.traces('pizza').filter((t) => t.reason === 'answered_dialog');
      expect(answered).toHaveLength(3);
      expect(reasons('pizza')).not.toContain('echo: done');
      await say('alice', 'hello');
      expect((await said('alice')).at(-1)).toBe('echo hello');
    },
  );

  it('an invalid answer is re-asked with retry; the index of a choice counts', async () => {
    await pizza();
    await say('alice', 'order');
    await say('alice', 'huge');
    await say('alice', '3');
    expect(await said('alice')).toEqual([
      'What size? small, medium or large',
      'Please answer small, medium or large',
      'How many?',
    ]);
  });

  it('attempts exhausted: the run fails with invalid_answer and on_error runs', async () => {
    await pizza();
    await say('alice', 'order');
    await say('alice', 'huge');
    await say('alice', 'tiny');
    expect((await said('alice')).at(-1)).toBe('Sorry: invalid_answer');
    expect(reasons('pizza').at(-1)).toBe('order: failed invalid_answer');
    await say('alice', 'hi');
    expect((await said('alice')).at(-1)).toBe('echo hi');
  });

  it('a cancel word runs on_cancel', async () => {
    await pizza();
    await say('alice', 'order');
    await say('alice', 'large');
    await say('alice', 'Stop');
    expect((await said('alice')).at(-1)).toBe('Order cancelled');
    expect(reasons('pizza').at(-1)).toBe('order: done dialog_cancelled');
  });

  it('each ask reports its outcome for coverage: answered, re-asked, cancel, timeout', async () => {
    await pizza(['alice', 'bob']);
    const outcomes = () =>
      world!
        .traces('pizza')
        .filter((t) => t.rule === 'order' && t.outcome !== 'waiting')
        .flatMap((t) =>
          t.steps
            .filter((st) => st.action === 'ask')
            .map((st) => (st.result as { outcome?: string } | undefined)?.outcome),
        );
    await say('alice', 'order');
    await say('alice', 'huge');
    await say('alice', 'large');
    await say('alice', '2');
    await say('alice', 'stop');
    await say('bob', 'order');
    await world!.advance('11m');
    expect(outcomes()).toEqual(['re-asked', 'answered', 'cancel', 'timeout']);
  });

  it('the timeout fires by itself on the virtual clock: no further message', async () => {
    await pizza();
    await say('alice', 'order');
    await world!.advance('9m');
    expect(await said('alice')).toHaveLength(1);
    await world!.advance('2m');
    expect((await said('alice')).at(-1)).toBe('No answer, order dropped');
    expect(reasons('pizza').at(-1)).toBe('order: done dialog_timeout');
    await say('alice', 'large');
    expect((await said('alice')).at(-1)).toBe('echo large');
  });

  it('two people interleaved keep their own answers', async () => {
    await pizza(['alice', 'bob']);
    await say('alice', 'order');
    await say('bob', 'order');
    await say('bob', 'small');
    await say('alice', 'large');
    await say('alice', '3');
    await say('bob', '1');
    await say('bob', 'yes');
    await say('alice', 'no');
    expect((await said('alice')).at(-1)).toBe('Not ordered');
    expect(await said('alice')).toContain('Confirm 3 large? yes or no');
    expect((await said('bob')).at(-1)).toBe('Ordered 1 small');
  });

  it('survives a restart while waiting: the answer continues with the earlier answers', async () => {
    await pizza();
    await say('alice', 'order');
    await say('alice', 'medium');
    await world!.restart();
    await say('alice', '4');
    await world!.restart();
    await say('alice', 'y');
    expect(await said('alice')).toEqual([
      'What size? small, medium or large',
      'How many?',
      'Confirm 4 medium? yes or no',
      'Ordered 4 medium',
    ]);
  });

  it('an answer sent twice: the step after it runs once; the second message is an ordinary one', async () => {
    await pizza();
    await say('alice', 'order');
    await say('alice', 'small');
    await say('alice', '1');
    await world!.as('alice').send('pizza', 'yes');
    await world!.as('alice').send('pizza', 'yes');
    await world!.settle();
    expect((await said('alice')).slice(3)).toEqual(['Ordered 1 small', 'echo yes']);
  });
});

const TIPS = (mode: string) => `name: tips
as: tips
rules:
  - id: thanks
    on: transfer.received
    mode: ${mode}
    do:
      - accept
      - ask: { question: "Thanks for {{ event.amount }}! What is it for?", save: what }
      - reply: "Noted: {{ event.amount }} for {{ answers.what }}"
  - id: echo
    on: message.received
    do: [ { reply: "echo {{ event.content }}" } ]
`;

describe('dialogs and modes, ending, reloads', () => {
  it(
    'a question to a PIN (transfer.received) is answered in the direct conversation; a ' +
      'new trigger while it waits is skipped (in_dialog)',
    async () => {
      world = await createTestWorld({ users: { alice: { balance: 20 }, tips: {} } });
      await world.addBot(TIPS('queued'));
      await world.as('alice').pay('tips', 2);
      await world.settle();
      await world.as('alice').pay('tips', 3);
      await world.settle();
      await world.as('alice').send('tips', 'coffee');
      await world.settle();
      expect(await said('alice')).toEqual(['Thanks for 2! What is it for?', 'Noted: 2 for coffee']);
      expect(reasons('tips')).toContain('thanks: not_run in_dialog');
    },
  );

  it('mode restart: a new trigger by the same person ends the waiting dialog (restarted) and asks again', async () => {
    world = await createTestWorld({ users: { alice: { balance: 20 }, tips: {} } });
    await world.addBot(TIPS('restart'));
    await world.as('alice').pay('tips', 2);
    await world.settle();
    await world.as('alice').pay('tips', 3);
    await world.settle();
    await world.as('alice').send('tips', 'tea');
    await world.settle();
    expect(await said('alice')).toEqual([
      'Thanks for 2! What is it for?',
      'Thanks for 3! What is it for?',
      'Noted: 3 for tea',
    ]);
    expect(reasons('tips')).toContain('thanks: failed restarted');
  });

  it('an operator ends a dialog: traced dialog_ended, the next message is an ordinary one', async () => {
    await pizza();
    await say('alice', 'order');
    const runner = world!.host.runner('pizza')!;
    expect(runner.dialogs().map((d) => [d.person.display_name, d.rule, d.step])).toEqual([['alice', 'order', 0]]);
    expect(await runner.endDialogs(world!.users.alice!.pin_code)).toHaveLength(1);
    await world!.settle();
    expect(runner.dialogs()).toEqual([]);
    expect(reasons('pizza').at(-1)).toBe('order: failed dialog_ended');
    await say('alice', 'large');
    expect((await said('alice')).at(-1)).toBe('echo large');
  });

  it(
    'a reload that removes the rule of a waiting dialog ends it (dialog_ended); one ' +
      'that keeps the ask keeps the dialog',
    async () => {
      await pizza();
      await say('alice', 'order');
      await reload(
        PIZZA.replace(
          '"Ordered {{ answers.count }} {{ answers.size }}"',
          '"OK: {{ answers.count }} {{ answers.size }}"',
        ),
      );
      await say('alice', 'small');
      await say('alice', '2');
      await say('alice', 'yes');
      expect((await said('alice')).at(-1)).toBe('OK: 2 small');
      await say('alice', 'order');
      await reload(PIZZA.replace(/  - id: order[\s\S]*?(?=  - id: echo)/, ''));
      expect(reasons('pizza')).toContain('order: failed dialog_ended');
      await world!.as('alice').send('pizza', 'large');
      await world!.advance('1m'); // the reloaded bot's next poll
      expect((await said('alice')).at(-1)).toBe('echo large');
    },
  );
});
