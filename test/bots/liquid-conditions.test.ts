import { afterEach, describe, expect, it } from 'vitest';
import { createRegistry } from '../../src/runtime/registry.js';
import { loadBot } from '../../src/runtime/define/loader.js';
import { builtinConditions } from '../../src/runtime/builtins/conditions/builtin.js';
import { polledTriggers } from '../../src/runtime/builtins/triggers/polled.js';
import type { ConditionRunContext } from '../../src/runtime/contract/types.js';
import { formatProblem } from '../../src/util/yaml-errors.js';
import { createTestWorld, type TestWorld } from '../../src/testing/world.js';

/**
 * Boolean Liquid expressions (a bot's `liquid:` condition, a template's `{% if %}`) never hold by
 * mistake: every form liquidjs reads otherwise than written is refused at validation, and what
 * cannot be evaluated at run time is false, with the reason in the trace (issue 20, item 1).
 */

const registry = createRegistry();
const problems = (text: string) => loadBot('bot.yaml', text, { registry }).problems.map(formatProblem);
const head = 'name: t\nas: alice\nvars: { limit: 20 }\nrules:\n';
const rule = (expr: string) => `${head}  - on: transfer.received\n    if: { liquid: "${expr}" }\n    do: [accept]\n`;

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('liquid: conditions that liquidjs would read otherwise than written are refused', () => {
  it.each([
    [
      'a filter after a comparison (the attack: true for every amount)',
      'event.amount < vars.limit | default: 20',
      new RegExp(
        String.raw`^bot\.yaml:6:19: rules\.0\.if\.liquid: Liquid expression error: a ` +
          String.raw`filter after a comparison \("\| default: 20"\) applies to the result ` +
          String.raw`of the whole expression.* — a condition takes no filter after an ` +
          String.raw`operator: give a missing variable its value in vars:`,
      ),
    ],
    [
      'a filter after an equality',
      'event.amount == event.amount | minus: 3',
      /a filter after a comparison \("\| minus: 3"\)/,
    ],
    ['a trailing |', 'event.amount > 5 |', /"\|" with no filter after it|expected filter name/],
    ['two comparisons in a row', 'event.amount == 5 == true', /two comparisons in a row/],
    [
      'and before or',
      'event.amount > 5 and vars.open or vars.vip',
      /"and" before "or": Liquid groups from the right.* — put the or first/,
    ],
    [
      'a quoted number after <',
      'event.amount < \\"20\\"',
      /compares with the text "20".* — write the number without quotes: < 20/,
    ],
    ['a parenthesis', 'event.amount > 5 and (vars.open or vars.vip)', /Liquid expression error/],
  ])('%s', (_what, expr, re) => {
    const got = problems(rule(expr));
    expect(
      got.some((p) => re.test(p)),
      got.join('\n'),
    ).toBe(true);
  });

  it.each([
    ['a filter on a lone value', 'event.note | downcase'],
    ['not', 'not vars.open'],
    ['or before and', 'vars.vip or event.amount > 5 and vars.open'],
    ['a property instead of a filter', 'event.note.size > 3'],
  ])('accepts %s', (_what, expr) => {
    expect(problems(rule(expr))).toEqual([]);
  });

  it('refuses the same forms in a template {% if %}, at the tag', () => {
    const got = problems(
      `${head}  - on: transfer.received\n    do:\n      - reply: "ok{% if ` +
        `event.amount < vars.limit | default: 20 %} small{% endif %}"\n`,
    );
    expect(got).toHaveLength(1);
    expect(got[0]).toMatch(
      new RegExp(
        String.raw`^bot\.yaml:7:\d+: rules\.0\.do\.0\.reply: Liquid template error: \{% ` +
          String.raw`if event\.amount < vars\.limit \| default: 20 %\} \(template line 1, ` +
          String.raw`col 3\): a filter after a comparison`,
      ),
    );
  });

  it('at run time, a form that was not validated does not hold, and says why (fail closed)', async () => {
    const liquid = builtinConditions.find((c) => c.name === 'liquid')!;
    const trigger = polledTriggers.find((t) => t.name === 'transfer.received')!;
    const ctx = {
      scope: { event: { type: 'transfer.received', amount: 25 }, vars: {} },
      trigger,
    } as unknown as ConditionRunContext;
    const compile = () => {
      throw new Error('no nested conditions');
    };
    const attack = await liquid.compile('event.amount < vars.limit | default: 20', { compile })(ctx);
    expect(attack).toMatchObject({
      ok: false,
      detail: expect.stringMatching(/^not evaluated: a filter after a comparison/),
    });
    // a filter that throws while evaluating does not hold either, nor a division by zero (Infinity)
    const throws = await liquid.compile('(1..100000000) | join: ","', { compile })(ctx);
    expect(throws).toMatchObject({ ok: false, detail: 'could not be evaluated: memory alloc limit exceeded' });
    const infinite = await liquid.compile('event.amount | divided_by: 0', { compile })(ctx);
    expect(infinite).toMatchObject({
      ok: false,
      detail: 'could not be evaluated: the result is Infinity, not a number',
    });
  });

  it('the attack moves no money: the file is refused, and written as the hint says, 25 is declined', async () => {
    world = await createTestWorld({ users: { bob: { balance: 100 }, jar: {} } });
    const file = (expr: string) =>
      `name: jar\nas: jar\nvars: { limit: 20 }\nrules:\n  - id: small\n    on: ` +
      `transfer.received\n    if: { liquid: "${expr}" }\n    do: [accept]\n  - id: ` +
      `big\n    on: transfer.received\n    if: { not: { liquid: "${expr}" } }\n    ` +
      `do: [decline]\n`;
    await expect(world.addBot(file('event.amount < vars.limit | default: 20'))).rejects.toThrow(
      /a filter after a comparison/,
    );
    await world.addBot(file('event.amount < vars.limit'));
    const tx = await world.as('bob').pay('jar', 25);
    await world.settle();
    expect((await world.transfers('bob')).find((t) => t.id === tx.id)).toMatchObject({ status: 'declined' });
    expect(world.traces('jar').find((t) => t.rule === 'small')).toMatchObject({
      outcome: 'not_run',
      reason: 'condition_false',
    });
  });
});

describe(
  'field conditions that compare with a value of another type never hold: refused with ' +
    'the way to write it (item 2)',
  () => {
    const field = (cond: string, on = 'transfer.received') =>
      `${head}  - on: ${on}\n    if: ${cond}\n    do: [{ log: hi }]\n`;
    it.each([
      [
        'a comparison written as text',
        field('{ amount: "< 20" }'),
        new RegExp(
          String.raw`^bot\.yaml:6:19: rules\.0\.if\.amount: amount: "< 20" is text, and ` +
            String.raw`amount is a number: a field condition does not read comparisons, so ` +
            String.raw`it never holds — write amount: \{ max: 20 \} \(inclusive\), or ` +
            String.raw`liquid: "event\.amount < 20"$`,
        ),
      ],
      [
        '>= as text',
        field('{ amount: ">= 5" }'),
        /write amount: \{ min: 5 \} \(inclusive\), or liquid: "event\.amount >= 5"/,
      ],
      [
        'text in equals',
        field('{ amount: { equals: five } }'),
        /rules\.0\.if\.amount\.equals: amount: "five" is text, and amount is a number, so it never holds/,
      ],
      ['text in in:', field('{ amount: { in: [1, two] } }'), /rules\.0\.if\.amount\.in\.1: amount: "two" is text/],
      [
        'max on a text field',
        field('{ content: { max: 5 } }', 'message.received'),
        new RegExp(
          String.raw`rules\.0\.if\.content\.max: content is text, and max compares ` +
            String.raw`numbers, so it never holds — for its length: liquid: ` +
            String.raw`"event\.content\.size <= 5"`,
        ),
      ],
    ])('%s', (_what, text, re) => {
      const got = problems(text);
      expect(
        got.some((p) => re.test(p)),
        got.join('\n'),
      ).toBe(true);
    });

    it('a number as text still matches a number (YAML quoting), and text fields take text', () => {
      expect(problems(field('{ amount: "5" }'))).toEqual([]);
      expect(problems(field('{ content: "< 20" }', 'message.received'))).toEqual([]);
    });
  },
);

describe('the same forms inside {% liquid %} blocks and {% assign %}', () => {
  it.each([
    [
      'an if line of a {% liquid %} block',
      '"{% liquid\\n if event.amount < vars.limit | default: 20\\n echo \'small\'\\n endif %}"',
    ],
    [
      'an assign that compares',
      '"{% assign small = event.amount < vars.limit | default: 20 %}{% if small %}small{% endif %}"',
    ],
  ])('%s is refused', (_what, reply) => {
    const got = problems(`${head}  - on: transfer.received\n    do:\n      - reply: ${reply}\n`);
    expect(
      got.some((p) => /a filter after a comparison/.test(p)),
      got.join('\n'),
    ).toBe(true);
  });

  it('an assign with a filter on a lone value is fine', () => {
    expect(
      problems(
        `${head}  - on: transfer.received\n    do:\n      - reply: "{% assign n = event.amount | plus: 1 %}{{ n }}"\n`,
      ),
    ).toEqual([]);
  });
});
