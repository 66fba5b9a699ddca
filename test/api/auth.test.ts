import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { presentedKey } from '../../src/api/edge/auth.js';
import { ERRORS } from '../../src/api/errors.js';
import { createKey, Keys, listKeys, revokeKey } from '../../src/domain/users/keys.js';
import { createUser, Users } from '../../src/domain/users/users.js';
import { testApi, type TestApi } from '../helpers/api.js';

const UNAUTHORIZED = { error: { code: 'unauthorized', message: ERRORS.unauthorized[1] } };

describe('authentication', () => {
  let api: TestApi;
  let alice: Awaited<ReturnType<TestApi['user']>>;
  let revoked: string;
  beforeAll(async () => {
    api = await testApi();
    alice = await api.user('Alice');
    const bob = await api.user('Bob');
    revoked = bob.key;
    const keyId = api.store.read.col(Keys).ids('user', bob.user.id)[0]!;
    await api.store.transaction((tx) => revokeKey(tx, api.env, keyId));
  });
  afterAll(() => api.close());

  const me = () => api.http.get('/api/v1/me');

  it.each([
    ['no key at all', {}],
    ['an empty X-API-Key', { 'X-API-Key': '' }],
    ['a malformed key', { 'X-API-Key': 'not-a-key' }],
    ['a well-formed unknown key', { 'X-API-Key': `pinbot_${'A'.repeat(32)}` }],
    ['a revoked key', () => ({ 'X-API-Key': revoked })],
    ['a revoked key as Bearer', () => ({ Authorization: `Bearer ${revoked}` })],
    ['Basic instead of Bearer', () => ({ Authorization: `Basic ${alice.key}` })],
    ['Bearer without a key', { Authorization: 'Bearer ' }],
    ['a valid key with a suffix', () => ({ 'X-API-Key': `${alice.key}x` })],
  ] as Array<[string, Record<string, string> | (() => Record<string, string>)]>)(
    '%s → 401 with WWW-Authenticate: Bearer',
    async (_name, h) => {
      const res = await me()
        .set(typeof h === 'function' ? h() : h)
        .expect(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer\b/);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body).toEqual(UNAUTHORIZED);
    },
  );

  it.each([
    ['X-API-Key', () => ({ 'X-API-Key': alice.key })],
    ['Authorization: Bearer', () => ({ Authorization: `Bearer ${alice.key}` })],
    ['Authorization: bearer (any case)', () => ({ Authorization: `bearer ${alice.key}` })],
  ])('%s → 200', async (_name, h) => {
    const res = await me().set(h()).expect(200);
    expect(res.body).toEqual({ id: alice.user.id, display_name: 'Alice', pin_code: alice.user.pin_code });
  });

  it('a user may hold several keys; revoking one leaves the others working', async () => {
    const second = await api.store.transaction((tx) => createKey(tx, api.env, alice.user.id));
    await me().set('X-API-Key', second.api_key).expect(200);
    await api.store.transaction((tx) => revokeKey(tx, api.env, second.id));
    await me().set('X-API-Key', second.api_key).expect(401);
    await me().set('X-API-Key', alice.key).expect(200);
  });

  it('keys that change on one keep-alive connection are each looked up, a revoked one refused at once', async () => {
    // the digest of a connection's last key is kept with the connection (api/edge/auth.ts)
    const server = createServer(api.app);
    let connections = 0;
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const port = (server.address() as AddressInfo).port;
    const get = (headers: Record<string, string>) =>
      new Promise<{ status: number; body: { id?: string } }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/api/v1/me', agent, headers }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      const carol = await api.user('Carol');
      const second = await api.store.transaction((tx) => createKey(tx, api.env, carol.user.id));
      const sameLength = `${alice.key.slice(0, -1)}${alice.key.endsWith('A') ? 'B' : 'A'}`;
      const steps: Array<[Record<string, string>, number, string | undefined]> = [
        [{ 'X-API-Key': alice.key }, 200, alice.user.id],
        [{ 'X-API-Key': carol.key }, 200, carol.user.id],
        [{ Authorization: `Bearer ${alice.key}` }, 200, alice.user.id],
        // one character off, the same length: not the last key of the connection
        [{ 'X-API-Key': sameLength }, 401, undefined],
        [{ 'X-API-Key': alice.key }, 200, alice.user.id],
        [{ 'X-API-Key': 'not-a-key' }, 401, undefined],
        [{}, 401, undefined],
        [{ 'X-API-Key': second.api_key }, 200, carol.user.id],
      ];
      for (const [headers, status, id] of steps) {
        const res = await get(headers);
        expect(res.status, JSON.stringify(headers)).toBe(status);
        expect(res.body.id).toBe(id);
      }
      await api.store.transaction((tx) => revokeKey(tx, api.env, second.id));
      expect((await get({ 'X-API-Key': second.api_key })).status).toBe(401);
      expect((await get({ 'X-API-Key': second.api_key })).status).toBe(401);
      expect((await get({ 'X-API-Key': carol.key })).body.id).toBe(carol.user.id);
      // what a key found is kept with the connection and checked again on every request: a
      // changed user shows at once, a removed key or user is refused at once
      const dave = await api.user('Dave');
      expect((await get(dave.headers)).body).toMatchObject({ id: dave.user.id, display_name: 'Dave' });
      await api.store.transaction((tx) => tx.col(Users).update(dave.user.id, { display_name: 'David' }));
      expect((await get(dave.headers)).body).toMatchObject({ id: dave.user.id, display_name: 'David' });
      const daveKey = api.store.read.col(Keys).ids('user', dave.user.id)[0]!;
      await api.store.transaction((tx) => tx.col(Keys).delete(daveKey));
      expect((await get(dave.headers)).status).toBe(401);
      const erin = await api.user('Erin');
      expect((await get(erin.headers)).status).toBe(200);
      await api.store.transaction((tx) => tx.col(Users).delete(erin.user.id));
      expect((await get(erin.headers)).status).toBe(401);
      expect(connections).toBe(1);
    } finally {
      agent.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('every /api/v1 route of the table requires a key', async () => {
    const { allRoutes } = await import('../../src/api/routes.js');
    for (const r of allRoutes) {
      const path = '/api/v1' + r.path.replace(/:(\w+)/g, 'x_1');
      const res = await api.http[r.method](path);
      expect(res.status, `${r.method} ${path}`).toBe(401);
    }
  });
});

describe('the presented key', () => {
  const of = (headers: Record<string, string>) => presentedKey({ headers } as never);
  it('is the X-API-Key value as sent when nothing surrounds it, trimmed as String.prototype.trim when something does', () => {
    const key = `pinbot_${'A'.repeat(32)}`;
    expect(of({ 'x-api-key': key })).toBe(key);
    for (const around of [' ', '\t', '\u00a0', '\ufeff', '\u2003', '\u3000', '\n'])
      for (const k of [`${around}${key}`, `${key}${around}`, `${around}${key}${around}`])
        expect(of({ 'x-api-key': k })).toBe(k.trim());
    // nothing but whitespace: an empty key, refused as none (no fall back to Authorization)
    expect(of({ 'x-api-key': ' \u00a0 ', authorization: `Bearer ${key}` })).toBe('');
    expect(of({ 'x-api-key': 'x' })).toBe('x');
  });
  it('falls back to Authorization: Bearer when X-API-Key is missing or empty', () => {
    expect(of({ 'x-api-key': '', authorization: 'Bearer abc' })).toBe('abc');
    expect(of({ authorization: 'bearer  abc ' })).toBe('abc');
    expect(of({ authorization: 'Basic abc' })).toBeUndefined();
    expect(of({})).toBeUndefined();
  });
});

describe('API keys and users', () => {
  it('keys are pinbot_ + 192 random bits, stored only as their SHA-256', async () => {
    const api = await testApi();
    try {
      const keys = new Set<string>();
      for (let i = 0; i < 50; i++) {
        const { key, user } = await api.user(`U${i}`);
        expect(key).toMatch(/^pinbot_[A-Za-z0-9_-]{32}$/);
        expect(Buffer.from(key.slice(7), 'base64url')).toHaveLength(24);
        keys.add(key);
        const stored = api.store.read.col(Keys).get(api.store.read.col(Keys).ids('user', user.id)[0]!)!;
        expect(stored.hash).toBe(createHash('sha256').update(key).digest('hex'));
        expect(JSON.stringify(stored)).not.toContain(key.slice(7));
      }
      expect(keys.size).toBe(50);
      await api.store.close();
      const dir = api.dir;
      const disk = readFileSync(join(dir, 'db.json'), 'utf8');
      for (const k of keys) expect(disk).not.toContain(k.slice(7));
    } finally {
      await api.close();
    }
  });

  it('PINs are 6 characters A-Z 0-9 and unique', async () => {
    const api = await testApi({ memory: true });
    const pins = await api.store.transaction((tx) =>
      Array.from({ length: 1000 }, (_, i) => createUser(tx, api.env, { name: `u${i}` }).pin_code),
    );
    for (const p of pins) expect(p).toMatch(/^[A-Z0-9]{6}$/);
    expect(new Set(pins).size).toBe(pins.length);
    expect(api.store.read.col(Users).one('pin', pins[7]!)?.display_name).toBe('u7');
    await api.close();
  });

  it('last use on one keep-alive connection is counted across flushes (the pending use kept with it)', async () => {
    const api = await testApi();
    const server = createServer(api.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const port = (server.address() as AddressInfo).port;
    const get = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/api/v1/me', agent, headers }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      const { user, headers } = await api.user('Alice');
      const keyId = api.store.read.col(Keys).ids('user', user.id)[0]!;
      const used = () => listKeys(api.store.read, user.id, api.keyUsage)[0]!.last_used_at;
      for (let round = 1; round <= 3; round++) {
        api.clock.set(api.clock.now() + 60_000);
        expect(await get(headers)).toBe(200);
        expect(used()).toBe(new Date(api.clock.now()).toISOString());
        await api.keyUsage.flush(api.store);
        expect(api.store.read.col(Keys).get(keyId)!.last_used_at).toBe(api.clock.now());
      }
    } finally {
      agent.destroy();
      await new Promise((resolve) => server.close(resolve));
      await api.close();
    }
  });

  it('last use is kept in memory per request and written in one batch, not one journal line per request', async () => {
    const api = await testApi();
    try {
      const { user, headers } = await api.user('Alice');
      const keyId = api.store.read.col(Keys).ids('user', user.id)[0]!;
      const dir = api.dir;
      const journal = () => readFileSync(join(dir, 'journal.jsonl'), 'utf8').split('\n').filter(Boolean).length;
      const before = journal();
      for (let i = 0; i < 20; i++) {
        api.clock.set(api.clock.now() + 1000);
        await api.http.get('/api/v1/me').set(headers).expect(200);
      }
      expect(journal()).toBe(before);
      expect(api.store.read.col(Keys).get(keyId)!.last_used_at).toBeNull();
      expect(listKeys(api.store.read, user.id, api.keyUsage)[0]!.last_used_at).toBe(
        new Date(api.clock.now()).toISOString(),
      );
      await api.keyUsage.flush(api.store);
      expect(journal()).toBe(before + 1);
      expect(api.store.read.col(Keys).get(keyId)!.last_used_at).toBe(api.clock.now());
    } finally {
      await api.close();
    }
  });
});
