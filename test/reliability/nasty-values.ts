/**
 * The values that break servers, by kind. The fuzzer draws from these when it mutates a valid
 * request; each list says what it probes.
 */

/** Numbers at the edges, as JSON text (1e309 parses to Infinity; -0 and 0.005 are valid JSON). */
export const EDGE_NUMBER_TEXTS = [
  '0',
  '-0',
  '1e309',
  '-1e309',
  '0.005',
  '0.001',
  '1e-7',
  '5e-324',
  '-1',
  '-0.01',
  '0.30000000000000004',
  '1.999',
  '1.1e1',
  '9007199254740993',
  '1e21',
  '1000000.01',
  '999999999999999999999999',
  '100000000',
  '2.5',
  '1E2',
  '0.1',
] as const;

/** Strings a number field must not accept (NaN-like and look-alike numbers). */
export const NUMBER_LIKE_STRINGS = [
  '5',
  'NaN',
  'Infinity',
  '-Infinity',
  '1e3',
  '0x10',
  ' 1',
  '1 ',
  '+1',
  '٣',
  '１',
  'null',
  'true',
  '',
] as const;

/** Query-string values for integer parameters (limit, since …): edges, NaN-likes, look-alikes. */
export const BAD_QUERY_NUMBERS = [
  '0',
  '-0',
  '-1',
  '1e309',
  '0.005',
  '1.5',
  'NaN',
  'Infinity',
  '',
  ' ',
  '201',
  '1000000',
  '9'.repeat(400),
  '0x10',
  '1e2',
  '５',
  '٣',
  '5abc',
  'abc',
  'null',
  'undefined',
  '[]',
  '{}',
  '2026-11-21T12:00:00Z',
  '-9007199254740993',
  '+5',
  '%00',
] as const;

/** Odd Unicode: zero-width, bidi override, combining marks, astral, lone surrogate, BOM, NUL. */
export const ODD_UNICODE = [
  '\u200b',
  '\u200d',
  '\u202e',
  '\u0301\u0301\u0301',
  '👩‍👩‍👧‍👦',
  '𝕏',
  '\ud800',
  '\udfff',
  '\ufeff',
  '\u0000',
  '\u2028',
  '\u2029',
  'İ',
  'ß',
  'ﬀ',
  'ǅ',
  '\u00a0',
  'Z̷̢͉̿a̸͔̓l̵̰̈́g̷̟͆o̶̤͑',
] as const;

/** Strings that probe injection and templating (the bot runtime renders templates). */
export const INJECTION_STRINGS = [
  '<script>alert(1)</script>',
  "'; DROP TABLE users; --",
  '{{ 7 | times: 7 }}',
  '{% raw %}',
  '${env:HOME}',
  '../../etc/passwd',
  '%00',
  '\r\nX-Injected: 1',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
] as const;

/** Keys that pollute prototypes or shadow built-ins when a server copies objects carelessly. */
export const PROTO_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
] as const;

/** Path ids that are not ids, or ids of nothing. */
export function badIds(): string[] {
  return [
    'x',
    'txn_',
    '_',
    '__proto__',
    'constructor',
    'prototype',
    '..',
    '.',
    '%2e%2e',
    'TXN_ABC',
    'txn_0000000000000000000000',
    'zzz_zzzzzzzzzzzzzzzz',
    'a'.repeat(65),
    'a'.repeat(5000),
    'txn_💥',
    'txn_\u0000',
    ' txn_0123456789 ',
    'null',
    'undefined',
    '0',
    '-1',
    'txn_01hx/../me',
    'txn_0123456789?x=1',
    'txn_0123456789#f',
  ];
}

/** PINs that are not PINs, or PINs of nobody. */
export function badPins(): string[] {
  return [
    '',
    ' ',
    'ZZZZZZ',
    '000000',
    'abc',
    'ABCDEFG',
    'ABC-12',
    'ＡＢＣ１２３',
    'ß'.repeat(3),
    'ı'.repeat(6),
    '\u0000'.repeat(6),
    'A'.repeat(17),
    'A'.repeat(10000),
    '__proto__',
    '123456\n',
  ];
}

/** A string of `n` code points that ends in an astral character (code units ≠ code points). */
export function astralString(n: number): string {
  return n <= 0 ? '' : 'a'.repeat(n - 1) + '😀';
}

/** Raw request bodies that are not a JSON object. */
export function badRawBodies(): string[] {
  return [
    '',
    '{',
    '{"a":',
    '}',
    'null',
    '[]',
    '"text"',
    '0',
    'true',
    '{"a":1,}',
    "{'a':1}",
    '\ufeff{}',
    '{"a":1}{"b":2}',
    'NaN',
    '['.repeat(20_000) + ']'.repeat(20_000),
    '{"a":'.repeat(5000) + '1' + '}'.repeat(5000),
    '\u0000',
    '{"\ud800":1}',
    '{"a":"\\ud800"}',
  ];
}

/** Content types a client might send instead of application/json. */
export const ODD_CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/octet-stream',
  '',
  'application/json; charset=utf-8; foo=bar',
  'application/xml',
] as const;
