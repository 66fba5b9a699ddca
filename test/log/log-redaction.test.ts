import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containsKey, redactUrl } from '../../src/util/secrets.js';
import { loggedApi } from '../helpers/logged-api.js';
import { misplacedKeyHeaders, misplacedKeyQueries } from '../reliability/canary.js';

const KEY = 'pinbot_ZaMVxT0dG5bYk2pQ8wR1sN3uL6vE9cHj';
const SECRET = KEY.slice('pinbot_'.length);

describe('key-shaped values are spotted in any encoding', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  it.each([
    ['plain', KEY],
    ['upper-case prefix', KEY.replace('pinbot', 'PINBOT')],
    ['inside text', `curl/8 (${KEY})`],
    ['percent-encoded underscore', KEY.replace('_', '%5F')],
    ['fully percent-encoded', [...KEY].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('')],
    ['percent-encoded twice', KEY.replace('_', '%255F')],
    ['JSON escape', KEY.replace('_', '\\u005f')],
    ['HTML reference', KEY.replace('_', '&#95;')],
    ['base64 (Basic auth)', `Basic ${b64(`me:${KEY}`)}`],
    ['base64url', Buffer.from(KEY).toString('base64url')],
    ['hex', Buffer.from(KEY).toString('hex')],
  ])('%s', (_name, text) => {
    expect(containsKey(text)).toBe(true);
  });

  it.each([
    ['a request id', 'abc-123.x'],
    ['a UUID', '0b1e3c2a-6f0e-4d7e-9a55-3f1c0a9e2b11'],
    ['an id', 'cnv_1m7ze2pj10000k19rcufj'],
    ['long filler', 'a'.repeat(14_000)],
    ['a user agent', 'Mozilla/5.0 (X11; Linux x86_64)'],
  ])('not %s', (_name, text) => {
    expect(containsKey(text)).toBe(false);
  });

  it('redacts the URL component by component, keeping the rest', () => {
    expect(redactUrl(`/api/v1/me?api_key=${KEY}&limit=2`)).toBe('/api/v1/me?api_key=[redacted]&limit=2');
    expect(redactUrl(`/api/v1/conversations/${encodeURIComponent(KEY)}/messages?since=5`)).toBe(
      '/api/v1/conversations/[redacted]/messages?since=5',
    );
    expect(redactUrl(`/api/v1/me?secret=${SECRET}`)).toBe('/api/v1/me?secret=[redacted]');
    expect(redactUrl(`/api/v1/me?${KEY}=1`)).toBe('/api/v1/me?[redacted]=1');
    expect(redactUrl('/api/v1/wallet/transactions?before=txn_1m7ze2pj10000k19rcufj&limit=2')).toBe(
      '/api/v1/wallet/transactions?before=txn_1m7ze2pj10000k19rcufj&limit=2',
    );
  });
});

describe('the request log writes allow-listed headers, cut short, and never a key', () => {
  let lines: string[] = [];
  let http: ReturnType<typeof supertest>;
  let key: string;
  let close = () => undefined as void;

  beforeAll(async () => {
    ({ http, key, lines, close } = await loggedApi('trace'));
  });
  afterAll(() => close());

  it('keys under misnamed headers, in the request id or the URL are in no line', async () => {
    for (const headers of misplacedKeyHeaders(key)) {
      await http.get('/api/v1/me').set(headers);
      await http.get('/api/v1/me').set(headers).set('X-API-Key', key);
    }
    for (const q of misplacedKeyQueries(key)) await http.get(`/api/v1/me?${q}`).set('X-API-Key', key);
    await http.get(`/api/v1/conversations/${encodeURIComponent(key)}`).set('X-API-Key', key);
    await new Promise((r) => setTimeout(r, 20));
    expect(lines.length).toBeGreaterThan(20);
    const text = lines.join('\n');
    expect(text).not.toContain(key.slice('pinbot_'.length));
    expect(text).not.toContain(Buffer.from(key).toString('hex'));
    // The misnamed headers are named, so an operator sees what the client sent.
    expect(text).toContain('"other_headers":["api-key"]');
    expect(text).toContain('"cookie"');
  });

  it('a 14 kB header is not written; allow-listed values are cut to 200 characters', async () => {
    lines.length = 0;
    await http
      .get('/api/v1/nope')
      .set('X-Request-Id', 'big-1')
      .set('X-Pad', 'p'.repeat(14_000))
      .set('User-Agent', 'u'.repeat(1_500))
      .expect(401);
    await new Promise((r) => setTimeout(r, 20));
    const line = JSON.parse(lines.find((l) => l.includes('"big-1"'))!);
    expect(line.req.headers['user-agent']).toBe(`${'u'.repeat(200)}…[+1300]`);
    expect(line.req.headers['x-pad']).toBeUndefined();
    expect(line.req.other_headers).toEqual(['x-pad']);
    expect(JSON.stringify(line).length).toBeLessThan(2_000);
  });
});
