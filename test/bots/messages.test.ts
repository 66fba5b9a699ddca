import { afterEach, describe, expect, it } from 'vitest';
import { botWorld, type BotWorld } from '../helpers/bots.js';

let w: BotWorld;
afterEach(() => w?.close());

const faq = `name: faq
as: Help Desk
create_user: true
poll: 5s
rules:
  - id: hours
    on: message.received
    if: { content: { matches: "\\\\bhours\\\\b", flags: i } }
    do:
      - reply: "We are open 9 to 5, {{ event.sender.display_name }}."
`;

describe('message.received', () => {
  it('replies once in the conversation, and never to its own messages', async () => {
    w = await botWorld({ bots: { 'faq.yaml': faq } });
    const [status] = await w.host.start();
    expect(status).toMatchObject({ name: 'faq', status: 'starting' });
    await w.host.runner('faq')!.started;
    const alice = await w.user('Alice');
    const desk = w.botUser('faq');
    await w.poll('faq'); // baseline
    await alice.api.messages.send({ recipient_pin: desk.pin_code, content: 'What are your HOURS?' });
    await alice.api.messages.send({ recipient_pin: desk.pin_code, content: 'thanks' });
    await w.poll('faq');
    await w.poll('faq');
    const [conv] = (await alice.api.conversations.list()).conversations;
    const page = await alice.api.conversations.messages(conv!.id);
    expect(page.messages.map((m) => [m.sender.display_name, m.content])).toEqual([
      ['Alice', 'What are your HOURS?'],
      ['Alice', 'thanks'],
      ['Help Desk', 'We are open 9 to 5, Alice.'],
    ]);
    const traces = w.host.traces('faq')!;
    expect(traces.map((t) => [t.outcome, t.reason])).toEqual([
      ['done', undefined],
      ['not_run', 'condition_false'],
    ]);
    expect(traces[1]!.conditions).toMatchObject({
      ok: false,
      label: 'content matches /\\bhours\\b/i',
      detail: 'content = "thanks"',
    });
  });
});
