import { afterEach, describe, expect, it } from 'vitest';
import { createTestWorld, type TestWorld } from 'pinbot/testing';
import faq from './faq.js';

const questions = [
  { keywords: ['open'], answer: 'Monday to Friday, 9:00 to 17:00.' },
  { match: '\\b(price|cost)s?\\b', answer: 'A coffee is 2.50.' },
];
const BOT = 'name: helpdesk\nas: desk\nrules:\n  - id: known\n    on: message.received\n    if: { faq.known: true }\n    do:\n      - faq.answer: {}\n  - id: unknown\n    on: message.received\n    if: { faq.known: false }\n    do:\n      - reply: "I will ask a person."\n';

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('faq', () => {
  it('answers from the question table of its settings', async () => {
    world = await createTestWorld({ users: { alice: {}, desk: {} }, config: { rate_limits: { enabled: false }, plugins: { config: { faq: { questions } } } }, plugins: [faq], bots: [BOT] });
    await world.as('alice').send('desk', 'When are you OPEN?');
    await world.advance('5s');
    await world.as('alice').send('desk', 'what does a coffee cost');
    await world.advance('5s');
    await world.as('alice').send('desk', 'do you sell shoes');
    await world.advance('5s');
    expect((await world.inbox('alice')).map((m) => m.content)).toEqual(['Monday to Friday, 9:00 to 17:00.', 'A coffee is 2.50.', 'I will ask a person.']);
  });

  it('settings that do not fit its schema keep it from loading, saying where; a bad expression disables it', async () => {
    await expect(createTestWorld({ config: { plugins: { config: { faq: { questions: [{ keywords: ['x'] }] } } } }, plugins: [faq] })).rejects.toThrow(
      /plugins did not load:\nconfig: plugins\.config\.faq\.questions\.0: must have required property 'answer' — fix the settings of plugin faq/,
    );
    world = await createTestWorld({ config: { plugins: { config: { faq: { questions: [{ match: '(', answer: 'x' }] } } } }, plugins: [faq] });
    expect(world.plugins()[0]).toMatchObject({ name: 'faq', status: 'disabled', message: expect.stringContaining('plugins.config.faq.questions.0.match: Invalid regular expression') });
  });
});
