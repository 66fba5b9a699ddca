import { describe, expect, it } from 'vitest';
import { evaluate, liquid, render } from '../../src/runtime/liquid/templates.js';
import { copyPlain } from '../../src/runtime/state/copy.js';

// Issue 33 item 3: what a run costs per event — the cheaper ways must give the same results as
// the ways they replace (Liquid's asynchronous render, structuredClone).

describe('templates rendered synchronously give what the asynchronous render gives', () => {
  const scope = {
    event: {
      content: 'm1',
      amount: 250,
      sender: { display_name: 'Ann', pin_code: 'ABC123' },
      tags: ['a', 'b'],
    },
    me: { display_name: 'Echo' },
    vars: { n: 3, list: [1, 2, 3] },
    steps: [{ id: 'msg_1' }],
  };
  it.each([
    'echo {{ event.content }}',
    '{{ event.sender.display_name | upcase }} sent {{ event.amount | divided_by: 100.0 }}',
    '{% for t in event.tags %}[{{ t }}]{% endfor %} {{ event.tags.size }}',
    '{{ vars.list | join: "," }} {{ vars.list.first }}',
    '{% if vars.n > 2 %}many{% else %}few{% endif %} {{ steps[0].id }} {{ missing.field }}',
    '{{ event | json }}',
  ])('%s', async (text) => {
    expect(await render(text, scope)).toBe(String(await liquid.parseAndRender(text, scope)));
  });

  it('a template that reads the wallet (a promise) waits for it: its value', async () => {
    const withWallet = { ...scope, wallet: Promise.resolve({ balance: 1234 }) };
    expect(await render('you have {{ wallet.balance }}', withWallet)).toBe('you have 1234');
    expect(await evaluate('wallet.balance > 1000', withWallet)).toBe(true);
    expect(await evaluate('event.amount > 100', withWallet)).toBe(true);
  });

  it('a render that runs away is still stopped by the limits', async () => {
    const runaway = '{% for i in (1..100000000) %}{{ i }}{% endfor %}';
    await expect(render(runaway, scope)).rejects.toThrow(/limit/);
  });
});

describe('copyPlain copies as structuredClone does', () => {
  it('nested objects and arrays, sparse arrays, undefined fields, and a frozen source', () => {
    const sparse: unknown[] = [];
    sparse[2] = { status: 'done', result: { id: 'msg_1', at: undefined } };
    const decision = Object.freeze({ run: true, match: { a: '1' } });
    const source = Object.freeze({ steps: sparse, decision, n: null });
    const copy = copyPlain(source);
    expect(copy).toStrictEqual(structuredClone(source));
    expect(1 in copy.steps).toBe(false);
    expect(Object.isFrozen(copy)).toBe(false);
    expect(copy.decision).not.toBe(source.decision);
    copy.steps[0] = { status: 'started' };
    (copy.decision as { run: boolean }).run = false;
    expect(source.steps[0]).toBeUndefined();
    expect(source.decision.run).toBe(true);
  });

  it('a `__proto__` field from outside (a parsed answer) stays a field and sets no prototype', () => {
    const source = JSON.parse('{"result":{"__proto__":{"done":true,"steps":[1]},"id":"x"}}');
    const copy = copyPlain(source) as { result: Record<string, unknown> };
    expect(Object.getPrototypeOf(copy.result)).toBe(Object.prototype);
    expect(Object.hasOwn(copy.result, '__proto__')).toBe(true);
    expect((copy.result as { done?: unknown }).done).toBeUndefined();
    expect(copy).toStrictEqual(structuredClone(source));
  });

  it('objects that are not plain (a Date, a Map) are copied by structuredClone', () => {
    const source = { at: new Date(5), seen: new Map([['a', 1]]) };
    const copy = copyPlain(source);
    expect(copy.at).toBeInstanceOf(Date);
    expect(copy.at).not.toBe(source.at);
    expect(copy.at.getTime()).toBe(5);
    expect(copy.seen.get('a')).toBe(1);
  });
});
