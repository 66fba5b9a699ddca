import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { meRoutes } from '../../src/api/me/routes.js';
import type { RouteContext } from '../../src/api/route.js';
import { Users, type User } from '../../src/domain/users/users.js';
import { testApi, type TestApi } from '../helpers/api.js';

// GET /me answers a text made once per user record (api/me/routes.ts): the same bytes as
// JSON.stringify of the public user, and never a stale one once the record changes.
describe('GET /me', () => {
  let api: TestApi;
  let alice: Awaited<ReturnType<TestApi['user']>>;
  beforeAll(async () => {
    api = await testApi();
    alice = await api.user('Alice "the first" ✓');
  });
  afterAll(() => api.close());

  const me = (headers: Record<string, string>) => api.http.get('/api/v1/me').set(headers).expect(200);

  it('answers the public user, byte for byte as JSON.stringify of it, the same on every call', async () => {
    const u = alice.user;
    const expected = JSON.stringify({ id: u.id, display_name: u.display_name, pin_code: u.pin_code });
    for (let i = 0; i < 3; i++) {
      const res = await me(alice.headers);
      expect(res.text).toBe(expected);
      expect(res.headers['content-length']).toBe(String(Buffer.byteLength(expected)));
    }
  });

  it('shows a changed user at once (a changed record is a new record: a new text)', async () => {
    await me(alice.headers);
    await api.store.transaction((tx) => tx.col(Users).update(alice.user.id, { display_name: 'Alice II' }));
    const res = await me(alice.headers);
    expect(res.body).toEqual({ id: alice.user.id, display_name: 'Alice II', pin_code: alice.user.pin_code });
  });

  it('answers each user with their own record', async () => {
    const bob = await api.user('Bob');
    const [a, b] = await Promise.all([me(alice.headers), me(bob.headers)]);
    expect(a.body.id).toBe(alice.user.id);
    expect(b.body).toEqual({ id: bob.user.id, display_name: 'Bob', pin_code: bob.user.pin_code });
  });

  it('answers a record that is not frozen afresh each time (only stored, frozen records are kept)', () => {
    const handler = meRoutes[0]!.handler;
    const user: User = { id: 'usr_x', display_name: 'Mutable', pin_code: 'ABC123', created_at: 0 };
    const ctx = { user } as unknown as RouteContext;
    expect(handler(ctx).json).toBe('{"id":"usr_x","display_name":"Mutable","pin_code":"ABC123"}');
    (user as { display_name: string }).display_name = 'Changed';
    expect(handler(ctx).json).toBe('{"id":"usr_x","display_name":"Changed","pin_code":"ABC123"}');
  });

  it('gives an answer nobody can change (it is shared by every call of the record)', () => {
    const stored = api.store.read.col(Users).get(alice.user.id)!;
    const answer = meRoutes[0]!.handler({ user: stored } as unknown as RouteContext);
    expect(Object.isFrozen(answer)).toBe(true);
    expect(Object.isFrozen(answer.body)).toBe(true);
    expect(meRoutes[0]!.handler({ user: stored } as unknown as RouteContext)).toBe(answer);
  });
});
