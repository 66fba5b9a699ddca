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
const reasons = (bot: string) => world!.traces(bot).map((t) => `${t.rule}: ${t.outcome}${t.reason ? ` ${t.reason}` : ''}`);

async function pizza(users: string[] = ['alice']) {
  world = await createTestWorld({ users: Object.fromEntries([...users, 'pizza'].map((u) => [u, {}])) });
  await world.addBot(PIZZA);
  return world;
}

async function say(name: string, text: string) {
  await world!.as(name).send('pizza', text);
  await world!.settle();
}

describe('ask: a dialog of three questions', () => {
  it('asks, waits, saves each answer; no other rule runs on the answers; after it, a message is plain again', async () => {
    await pizza();
    await say('alice', 'order');
    expect(await said('alice')).toEqual(['What size? small, medium or large']);
    await say('alice', 'LARGE');
    await say('alice', '2');
    await say('alice', 'yes');
    expect(await said('alice')).toEqual(['What size? small, medium or large', 'How many?', 'Confirm 2 large? yes or no', 'Ordered 2 large']);
    const answered = world!.traces('pizza').filter((t) => t.reason === 'answered_dialog');
    expect(answered).toHaveLength(3);
    expect(reasons('pizza')).not.toContain('echo: done');
    await say('alice', 'hello');
    expect((await said('alice')).at(-1)).toBe('echo hello');
  });

  it('an invalid answer is re-asked with retry; the index of a choice counts', async () => {
    await pizza();
    await say('alice', 'order');
    await say('alice', 'huge');
    await say('alice', '3');
    expect(await said('alice')).toEqual(['What size? small, medium or large', 'Please answer small, medium or large', 'How many?']);
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
    expect(await said('alice')).toEqual(['What size? small, medium or large', 'How many?', 'Confirm 4 medium? yes or no', 'Ordered 4 medium']);
  });
});
