import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, IdempotencyRecords, isCanonical } from '../../src/api/writes/idempotency.js';
import { byteSize } from '../../src/domain/quotas.js';
import { testApi, type TestApi } from '../helpers/api.js';
import { testRoutes } from '../helpers/test-routes.js';

// Issue 33 item 2: a keyed write hashes its body as `JSON.stringify` when the body is canonical
// already (keys sorted), and a message's size is its UTF-8 length when JSON escapes nothing in
// it. Both must give exactly what the slow forms give, for any input.

/** A deterministic generator (xorshift), so a failure repeats. */
function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return (n: number) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
}

const KEYS = ['a', 'b', 'B', 'aa', '1', '2', '10', 'é', '__proto__', 'content', 'z', '', 'toJSON'];
const CHARS = ['a', 'Z', ' ', '"', '\\', '\u0000', '\u001f', '\u007f', 'é', '\u2028', '😀', '\ud800', '\udc00', '字'];

function text(r: (n: number) => number): string {
  let s = '';
  for (let i = r(12); i > 0; i--) s += CHARS[r(CHARS.length)];
  return s;
}

/** A value as JSON.parse makes them (keys in random orders), sometimes with undefined members. */
function value(r: (n: number) => number, depth: number): unknown {
  switch (depth > 3 ? r(5) : r(8)) {
    case 0:
      return null;
    case 1:
      return r(2) === 0;
    case 2:
      return [0, -0, 1.5, -7, 1e21, 2 ** 53 + 2, Number.NaN][r(7)];
    case 3:
    case 4:
      return text(r);
    case 5:
      return Array.from({ length: r(4) }, () => (r(9) === 0 ? undefined : value(r, depth + 1)));
    default: {
      const o: Record<string, unknown> = {};
      // JSON.parse defines `__proto__` as an own key; so does defineProperty
      for (let i = r(5); i > 0; i--) {
        const k = KEYS[r(KEYS.length)]!;
        const v = r(9) === 0 ? undefined : value(r, depth + 1);
        Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
      }
      return o;
    }
  }
}

/** `v` with every object's keys in sorted order (what a canonical client sends). */
function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort())
    Object.defineProperty(out, k, {
      value: sorted((v as Record<string, unknown>)[k]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return out;
}

/** Whether an object in `v` has an integer-like key (objects list those first, numerically). */
function integerKeys(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(integerKeys);
  if (v === null || typeof v !== 'object') return false;
  return Object.entries(v).some(([k, x]) => /^\d+$/.test(k) || integerKeys(x));
}

describe('the canonical fast path of a fingerprint', () => {
  it('a value it takes stringifies to its canonical JSON, for 20,000 random values', () => {
    const r = rng(33);
    let taken = 0;
    for (let i = 0; i < 20_000; i++) {
      const v = value(r, 0);
      const s = sorted(v);
      // the same value with its keys sorted is taken, unless integer-like keys are among them
      // (objects list those first, in numeric order: "2" before "10")
      if (!integerKeys(s)) expect(isCanonical(s)).toBe(true);
      for (const x of [v, s]) {
        if (!isCanonical(x)) continue;
        taken++;
        expect(JSON.stringify(x ?? null)).toBe(canonicalJson(x));
      }
    }
    expect(taken).toBeGreaterThan(20_000);
  });

  it('integer-like keys are out of order for it (objects list them first, numerically)', () => {
    const v = JSON.parse('{"10":1,"2":2}') as unknown;
    expect(isCanonical(v)).toBe(false);
    expect(canonicalJson(v)).toBe('{"10":1,"2":2}');
    expect(JSON.stringify(v)).toBe('{"2":2,"10":1}');
  });

  it('what is not parsed JSON takes the slow path', () => {
    class Point {
      x = 1;
    }
    const arrayWithToJson = Object.assign([1], { toJSON: () => 'x' });
    for (const v of [new Date(0), new Map(), new Point(), arrayWithToJson, { f: () => 1 }, [Symbol('s')], 1n])
      expect(isCanonical(v)).toBe(false);
    expect(isCanonical({ a: { b: [1, { c: null, d: 'x' }] }, e: true })).toBe(true);
    expect(isCanonical(Object.assign(Object.create(null), { a: 1, b: 2 }))).toBe(true);
  });
});

describe('the stored fingerprint of a keyed write', () => {
  let api: TestApi;
  let alice: Awaited<ReturnType<TestApi['user']>>;
  beforeAll(async () => {
    api = await testApi({ routes: testRoutes });
    alice = await api.user('Alice');
  });
  afterAll(() => api.close());

  const sha = (s: string) => createHash('sha256').update(s).digest('hex');
  const stored = (key: string) =>
    api.store.read.col(IdempotencyRecords).get(`idem_${sha(`${alice.user.id}\u0000${key}`)}`)!;
  const post = (key: string, raw: string) =>
    api.http
      .post('/api/v1/test/notes')
      .set(alice.headers)
      .set('Content-Type', 'application/json')
      .set('Idempotency-Key', key)
      .send(raw);

  it('is the hash of the canonical JSON, whether the body came sorted or not', async () => {
    // the route fills `count` in (its default) before the key is claimed, as before
    await post('sorted', '{"count":2,"text":"x"}').expect(201);
    await post('unsorted', '{"text":"x","count":2}').expect(201);
    const want = sha(`POST /api/v1/test/notes\n{"count":2,"text":"x"}`);
    expect(stored('sorted').fingerprint).toBe(want);
    expect(stored('unsorted').fingerprint).toBe(want);
    // either form replays the other's outcome byte for byte
    const again = await post('sorted', '{"text":"x","count":2}').expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(stored('sorted').body);
  });
});

describe('byteSize (a message counted against its sender’s quota)', () => {
  it('is the UTF-8 length of the text as a JSON string, for 20,000 random texts', () => {
    const r = rng(7);
    for (let i = 0; i < 20_000; i++) {
      const s = text(r);
      expect(byteSize(s)).toBe(Buffer.byteLength(JSON.stringify(s), 'utf8') - 2);
    }
    expect(byteSize('plain ascii')).toBe(11);
    expect(byteSize('é')).toBe(2);
    expect(byteSize('\u0001')).toBe(6);
    expect(byteSize('"')).toBe(2);
    expect(byteSize('\ud800')).toBe(6); // a lone surrogate, escaped by JSON
    expect(byteSize('😀')).toBe(4);
  });
});
