import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { compileRegex } from 'pinbot/plugin';
import { createTestWorld, type TestWorld } from 'pinbot/testing';
import { loadConfig } from '../src/config/load.js';
import { formatPluginProblem } from '../src/plugin-api/collect.js';
import { buildRegistry } from '../src/services/registry.js';
import { tempDir } from '../test/helpers/api.js';
import faq from './faq.js';

const questions = [
  { keywords: ['open'], answer: 'Monday to Friday, 9:00 to 17:00.' },
  { match: '\\b(price|cost)s?\\b', answer: 'A coffee is 2.50.' },
];
const BOT =
  'name: helpdesk\nas: desk\nrules:\n  - id: known\n    on: message.received\n    if: ' +
  '{ faq.known: true }\n    do:\n      - faq.answer: {}\n  - id: unknown\n    on: ' +
  'message.received\n    if: { faq.known: false }\n    do:\n      - reply: "I will ' +
  'ask a person."\n';

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('faq', () => {
  it('answers from the question table of its settings', async () => {
    world = await createTestWorld({
      users: { alice: {}, desk: {} },
      config: { rate_limits: { enabled: false }, plugins: { config: { faq: { questions } } } },
      plugins: [faq],
      bots: [BOT],
    });
    await world.as('alice').send('desk', 'When are you OPEN?');
    await world.advance('5s');
    await world.as('alice').send('desk', 'what does a coffee cost');
    await world.advance('5s');
    await world.as('alice').send('desk', 'do you sell shoes');
    await world.advance('5s');
    expect((await world.inbox('alice')).map((m) => m.content)).toEqual([
      'Monday to Friday, 9:00 to 17:00.',
      'A coffee is 2.50.',
      'I will ask a person.',
    ]);
  });

  it('settings that do not fit its schema keep it from loading, saying where; so does a bad expression', async () => {
    await expect(
      createTestWorld({
        config: { plugins: { config: { faq: { questions: [{ keywords: ['x'] }] } } } },
        plugins: [faq],
      }),
    ).rejects.toThrow(
      new RegExp(
        String.raw`plugins did not load:\nconfig: plugins\.config\.faq\.questions\.0: ` +
          String.raw`must have required property 'answer' — fix the settings of plugin faq`,
      ),
    );
    await expect(
      createTestWorld({
        config: { plugins: { config: { faq: { questions: [{ match: '(', answer: 'x' }] } } } },
        plugins: [faq],
      }),
    ).rejects.toThrow(
      /config: plugins\.config\.faq\.questions\.0\.match: invalid regular expression: missing closing \)/,
    );
  });

  it(
    'a pattern that backtracks catastrophically in JavaScript runs in linear time on a ' +
      '40-character message (issue 21, item 4)',
    async () => {
      const evil = [{ match: '^([A-Za-z]+\\s?)*$', answer: 'only words' }];
      world = await createTestWorld({
        users: { alice: {}, desk: {} },
        config: { rate_limits: { enabled: false }, plugins: { config: { faq: { questions: evil } } } },
        plugins: [faq],
        bots: [BOT],
      });
      // with RegExp this message takes hours (24 characters: ~0.2 s, 26: ~0.8 s, each one more
      // doubles it), the whole server frozen meanwhile. That the run finishes at all is the proof.
      const message = `${'A'.repeat(39)}!`;
      expect(message).toHaveLength(40);
      await world.as('alice').send('desk', message);
      await world.as('alice').send('desk', 'Only words here');
      await world.advance('5s');
      expect((await world.inbox('alice')).map((m) => m.content)).toEqual(['I will ask a person.', 'only words']);
      // the engine plugins get from pinbot/plugin is the same
      expect(compileRegex(evil[0]!.match).test(message)).toBe(false);
    },
  );

  it(
    'a backreference or lookaround in match is refused at start, at its ' +
      'config.yaml:line:col, saying why (issue 21, item 4)',
    async () => {
      const { dir, cleanup } = tempDir('pinbot-faq-');
      try {
        const yaml =
          'plugins:\n  config:\n    faq:\n      questions:\n        - { match: ' +
          '"(a)\\\\1", answer: x }\n        - { keywords: [ok], answer: y }\n        - ' +
          'match: "price(?=s)"\n          answer: z\n';
        writeFileSync(join(dir, 'config.yaml'), yaml);
        const registry = await buildRegistry({
          config: loadConfig(join(dir, 'config.yaml')),
          log: pino({ level: 'silent' }),
          pluginsDir: false,
          plugins: [faq],
          projectDir: dir,
        });
        const lines = registry.plugins!.problems.map(formatPluginProblem).map((l) => l.replaceAll(`${dir}/`, ''));
        expect(lines).toEqual([
          expect.stringMatching(
            new RegExp(
              String.raw`^config\.yaml:5:20: plugins\.config\.faq\.questions\.0\.match: ` +
                String.raw`the pattern uses a backreference \(\\1\), which the linear-time ` +
                String.raw`regular expression engine cannot run — `,
            ),
          ),
          expect.stringMatching(
            new RegExp(
              String.raw`^config\.yaml:7:18: plugins\.config\.faq\.questions\.2\.match: ` +
                String.raw`the pattern uses a lookahead \(\(\?=…\)\), which the linear-time ` +
                String.raw`regular expression engine cannot run — `,
            ),
          ),
        ]);
      } finally {
        cleanup();
      }
    },
  );
});
