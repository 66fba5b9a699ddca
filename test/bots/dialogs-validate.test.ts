import { describe, expect, it } from 'vitest';
import { createRegistry } from '../../src/runtime/registry.js';
import { readAnswer } from '../../src/runtime/define/ask-expect.js';
import { loadBot } from '../../src/runtime/define/loader.js';
import { formatProblem } from '../../src/util/yaml-errors.js';

/** `ask` in bot files: refused where nobody can answer, answers.X checked, expect kinds read. */

const registry = createRegistry();
const problems = (text: string) => loadBot('bot.yaml', text, { registry, env: {} }).problems.map(formatProblem);
const head = 'name: t\nas: alice\nrules:\n';

describe('ask at validation: file:line:col', () => {
  it.each([
    [
      'ask on a schedule (nobody to ask)',
      `${head}  - on: { schedule: "0 9 * * *" }\n    do:\n      - ask: { question: "How are you?" }\n`,
      new RegExp(
        String.raw`^bot\.yaml:6:14: rules\.0\.do\.0\.ask: ask needs an event with someone ` +
          String.raw`to ask, and schedule has none — .*schedule or startup has nobody to ` +
          String.raw`answer`,
      ),
    ],
    [
      'ask on startup',
      `${head}  - on: startup\n    do:\n      - ask: { question: "Hi?" }\n`,
      /^bot\.yaml:6:14: .*ask needs an event with someone to ask, and startup has none/,
    ],
    [
      'answers.X no earlier ask saves, with did you mean',
      `${head}  - on: message.received\n    do:\n      - ask: { question: "Size?", ` +
        `save: size }\n      - reply: "You said {{ answers.sise }}"\n`,
      new RegExp(
        String.raw`^bot\.yaml:7:29: rules\.0\.do\.1\.reply: answers\.sise: no ask before ` +
          String.raw`this step saves "sise" — did you mean "size"\?`,
      ),
    ],
    [
      'answers.X read before the ask that saves it',
      `${head}  - on: message.received\n    do:\n      - reply: "{{ answers.size ` +
        `}}"\n      - ask: { question: "Size?", save: size }\n`,
      new RegExp(
        String.raw`^bot\.yaml:6:\d+: rules\.0\.do\.0\.reply: answers\.size: no ask before ` +
          String.raw`this step saves "size" — add save: NAME to an ask before this step`,
      ),
    ],
    [
      'answers.X in a liquid: condition of choose',
      `${head}  - on: message.received\n    do:\n      - ask: { question: "OK?", ` +
        `save: ok, expect: yes_no }\n      - choose:\n          - if: { liquid: ` +
        `"answers.okay" }\n            do: [ { reply: yes } ]\n`,
      new RegExp(
        String.raw`rules\.0\.do\.1\.choose\.0\.if\.liquid: answers\.okay: no ask before ` +
          String.raw`this step saves "okay" — did you mean "ok"\?`,
      ),
    ],
    [
      'a pattern the linear-time engine cannot run',
      `${head}  - on: message.received\n    do:\n      - ask: { question: "Code?", expect: { matches: "(a)\\\\1" } }\n`,
      /rules\.0\.do\.0\.ask\.expect\.matches: the pattern uses a backreference/,
    ],
    [
      'an unknown expect kind',
      `${head}  - on: message.received\n    do:\n      - ask: { question: "Code?", expect: colour }\n`,
      /rules\.0\.do\.0\.ask\.expect/,
    ],
    [
      'min above max',
      `${head}  - on: message.received\n    do:\n      - ask: { question: "N?", ` +
        `expect: { number: { min: 5, max: 1 } } }\n`,
      /number: min 5 is more than max 1/,
    ],
  ])('%s', (_what, text, re) => {
    expect(problems(text).join('\n')).toMatch(re);
  });

  it('a valid dialog loads: on_timeout and on_cancel read the answers of do, named groups count as answers', () => {
    const ok =
      `${head}  - on: message.received\n    cancel_words: [stop]\n    do:\n      - ` +
      `ask: { question: "Date?", expect: { matches: "^(?<day>\\\\d+)/(?<month>\\\\d+)$" ` +
      `} }\n      - reply: "day {{ answers.day }} month {{ answers.month }}"\n    ` +
      `on_timeout: [ { reply: "gave up at {{ answers.day | default: 'none' }}" } ]\n    ` +
      `on_cancel: [ { reply: "bye" } ]\n`;
    expect(problems(ok)).toEqual([]);
  });
});

describe('readAnswer: the expect kinds', () => {
  it.each([
    ['text', ' hi ', { ok: true, value: 'hi' }],
    ['text', '   ', { ok: false }],
    ['number', '1,5', { ok: true, value: 1.5 }],
    ['number', 'two', { ok: false }],
    [{ number: { min: 1, max: 10 } }, '11', { ok: false }],
    [{ number: { min: 1, max: 10, integer: true } }, '2.5', { ok: false }],
    [{ choice: ['Small', 'Large'] }, 'LARGE', { ok: true, value: 'Large' }],
    [{ choice: ['Small', 'Large'] }, '1', { ok: true, value: 'Small' }],
    [{ choice: ['Small', 'Large'] }, '3', { ok: false }],
    ['yes_no', 'Yes!', { ok: true, value: true }],
    ['yes_no', 'n', { ok: true, value: false }],
    ['yes_no', 'maybe', { ok: false }],
    ['pin', ' abc123 ', { ok: true, value: 'ABC123' }],
    ['pin', 'abc12', { ok: false }],
    [
      { matches: '^(?<qty>\\d+) (?<item>\\w+)$' },
      '2 pizzas',
      { ok: true, value: '2 pizzas', groups: { qty: '2', item: 'pizzas' } },
    ],
  ] as const)('%j reads %j', (e, text, want) => {
    expect(readAnswer(e as never, text)).toMatchObject(want);
  });

  it('a hostile pattern and a long answer cost linear time', () => {
    const t0 = performance.now();
    expect(readAnswer({ matches: '^([A-Za-z]+\\s?)*$' }, `${'a '.repeat(2000)}!`).ok).toBe(false);
    expect(readAnswer('text', 'x'.repeat(5000))).toMatchObject({ ok: false, why: 'longer than 4000 characters' });
    expect(performance.now() - t0).toBeLessThan(5000);
  });
});
