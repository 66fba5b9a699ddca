import { describe, expect, it } from 'vitest';
import { checkMatchers, formatMismatches, matchValue, probe, type Mismatch } from '../../src/scenario/match.js';
import { checkSchema } from '../../src/scenario/openapi-schemas.js';
import { curlLine } from '../../src/scenario/http.js';
import { render } from '../../src/scenario/templates.js';

const tx = {
  id: 'txn_1',
  type: 'transfer',
  amount: 2.5,
  status: 'pending',
  note: '',
  sender: null,
  tags: ['a', 'b'],
  items: [
    { id: 1, ok: true },
    { id: 2, ok: false },
  ],
};

describe('matchers', () => {
  it.each([
    ['a partial object', { status: 'pending' }, true],
    ['a wrong value', { status: 'accepted' }, false],
    ['a missing key', { nope: 1 }, false],
    ['type is a field, not a matcher', { type: 'transfer' }, true],
    ['$type', { amount: { $type: 'number' }, id: { $type: 'string' } }, true],
    ['$type integer', { amount: { $type: 'integer' } }, false],
    ['regex', { id: { matches: '^TXN_', flags: 'i' } }, true],
    ['range', { amount: { min: 2, max: 3 } }, true],
    ['gt / lt', { amount: { gt: 2.5 } }, false],
    ['approx with tolerance', { amount: { approx: 2.49, tolerance: 0.01 } }, true],
    ['approx outside tolerance', { amount: { approx: 2.4, tolerance: 0.01 } }, false],
    ['in', { status: { in: ['pending', 'accepted'] } }, true],
    ['$absent', { conversation_id: '$absent', missing: { $absent: true } }, true],
    ['$absent on a present key', { id: '$absent' }, false],
    ['$any', { sender: '$any' }, true],
    ['null equals null', { sender: null }, true],
    ['contains in a list', { tags: { contains: 'b' } }, true],
    ['contains a partial object', { items: { contains: { id: 2 } } }, true],
    ['contains in text', { id: { contains: '_1' } }, true],
    ['length', { tags: { length: 2 }, items: { length: { min: 3 } } }, false],
    ['each', { items: { each: { ok: { $type: 'boolean' } } } }, true],
    ['each failing', { items: { each: { ok: true } } }, false],
    ['not', { status: { not: 'accepted' } }, true],
    ['arrays match element by element, same length', { tags: ['a', 'b'] }, true],
    ['a shorter array does not match', { tags: ['a'] }, false],
    ['$-prefixed keyword for a clashing field name', { amount: { $equals: 2.5 } }, true],
  ])('%s', (_what, expected, ok) => {
    expect(probe(expected, tx)).toBe(ok);
  });

  it('strict: no other keys, at every level', () => {
    expect(probe({ a: 1, b: { c: 2 } }, { a: 1, b: { c: 2 } }, { strict: true })).toBe(true);
    const out: Mismatch[] = [];
    matchValue({ a: 1, b: { c: 2 } }, { a: 1, b: { c: 2, d: 3 } }, 'body', out, { strict: true });
    expect(out).toEqual([{ path: 'body.b.d', expected: 'absent (strict)', actual: 3 }]);
  });

  it('says where, what was expected and what was there', () => {
    const out: Mismatch[] = [];
    matchValue(
      { transaction: { status: 'accepted', amount: { min: 5 } } },
      { transaction: { status: 'pending', amount: 2.5 } },
      'body',
      out,
    );
    expect(formatMismatches(out)).toBe(
      '  body.transaction.status\n    - expected "accepted"\n    + actual   ' +
        '"pending"\n  body.transaction.amount\n    - expected a number ≥ 5\n    + ' +
        'actual   2.5',
    );
  });

  it('checks matchers before running: regex, type names, stray flags', () => {
    expect(
      checkMatchers({ a: { matches: '(' }, b: { $type: 'text' }, c: { flags: 'i' } }).map((p) => p.path.join('.')),
    ).toEqual(['a.matches', 'b.$type', 'c.flags']);
  });

  it('$schema inside a body checks a part against a schema of the OpenAPI document', () => {
    const user = { id: 'usr_1', display_name: 'a', pin_code: 'ABC123' };
    expect(
      probe({ sender: { $schema: { $ref: '#/components/schemas/User' } } }, { sender: user }, { schema: checkSchema }),
    ).toBe(true);
    expect(
      probe(
        { sender: { $schema: { $ref: '#/components/schemas/User' } } },
        { sender: { id: 1 } },
        { schema: checkSchema },
      ),
    ).toBe(false);
    expect(checkSchema({ response: 'GET /me' }, { ...user, extra: 1 })).toEqual([
      '(root) must NOT have additional properties (extra)',
    ]);
  });
});

describe('templates', () => {
  it('a whole template keeps its type; text is interpolated; filters work', () => {
    expect(
      render({ n: '{{ x }}', s: 'x={{ x }}', f: '{{ x | times: 2 }}', o: '{{ o }}' }, { x: 5, o: { a: [1] } }),
    ).toEqual({ n: 5, s: 'x=5', f: 10, o: { a: [1] } });
  });
  it('an unknown variable fails with the template named', () => {
    expect(() => render('{{ nope }}', {})).toThrow('template "{{ nope }}": undefined variable: nope');
  });
});

describe('the curl reproducer', () => {
  it('reads keys from variables and masks them everywhere else', () => {
    const key = 'pinbot_secretsecretsecret';
    const line = curlLine(
      {
        method: 'POST',
        url: `http://h/api/v1/x?k=${key}`,
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
        body: `{"note":"it's ${key}"}`,
      },
      { 'Tip Jar': key },
    );
    expect(line).toBe(
      `curl -sS -X POST 'http://h/api/v1/x?k=***' -H "X-API-Key: $PINBOT_KEY_TIP_JAR" -H 'Content-Type: application/json' --data-raw '{"note":"it'\\''s ***"}'`,
    );
    expect(line).not.toContain('secret');
  });
});
