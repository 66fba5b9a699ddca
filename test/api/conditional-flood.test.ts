import { afterEach, describe, expect, it } from 'vitest';
import { UNSHOWN } from '../../src/api/reads/change-counters.js';
import { allRoutes } from '../../src/api/routes.js';
import { COLLECTIONS } from '../../src/deployment/store-integrity.js';
import type { RouteDef } from '../../src/api/route.js';
import { configFrom } from '../../src/config/load.js';
import { createKey } from '../../src/domain/users/keys.js';
import { createUser } from '../../src/domain/users/users.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { tempDir } from '../helpers/api.js';

// Issue 21 item 2: a 304 was given back to the rate limit while the server still built and
// hashed the whole list, so `If-None-Match: *` (or the tag held) made list reads unlimited:
// 1,625 builds of a 530 kB page in 17 s from one key with a limit of 100 a minute.

let server: RunningServer | undefined;
let cleanup: (() => void) | undefined;
afterEach(async () => {
  await server?.close();
  cleanup?.();
  server = cleanup = undefined;
});

/** A real server on port 0 whose GET /conversations counts the bodies it builds. Internal. */
async function world(limits: { general: number; conditional: number }) {
  const builds = { conversations: 0 };
  const routes: RouteDef[] = allRoutes.map((r) =>
    r.method === 'get' && r.path === '/conversations' && !r.write
      ? { ...r, handler: (ctx) => (builds.conversations++, r.handler(ctx)) }
      : r,
  );
  const tmp = tempDir('pinbot-cond-');
  cleanup = tmp.cleanup;
  server = await startServer({
    dataDir: tmp.dir,
    config: configFrom({
      rate_limits: {
        enabled: true,
        general: { limit: limits.general, window: '1h' },
        messages: { limit: 1000, window: '1h' },
        conditional: { limit: limits.conditional, window: '1h' },
      },
    }),
    host: '127.0.0.1',
    port: 0,
    virtualClock: Date.parse('2026-11-21T12:00:00Z'),
    services: [],
    routes,
  });
  const s = server;
  const user = async (name: string) => {
    const { pin, key } = await s.store.transaction((tx) => {
      const u = createUser(tx, s.env, { name });
      return { pin: u.pin_code, key: createKey(tx, s.env, u.id).api_key };
    });
    const call = (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
      fetch(`${s.url}/api/v1${path}`, {
        method,
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json', ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    return { pin, key, call };
  };
  return { builds, user };
}

/** Sends `n` requests, ten at a time; returns how many got each status. Internal. */
async function flood(n: number, send: () => Promise<Response>): Promise<Record<number, number>> {
  const seen: Record<number, number> = {};
  for (let done = 0; done < n; done += 10) {
    const batch = await Promise.all(Array.from({ length: Math.min(10, n - done) }, () => send()));
    for (const r of batch) {
      seen[r.status] = (seen[r.status] ?? 0) + 1;
      await r.arrayBuffer();
    }
  }
  return seen;
}

describe('conditional reads are cheap, not free', () => {
  it('a flood with the tag it holds builds the list once, and stops at the conditional bucket', async () => {
    const w = await world({ general: 100, conditional: 50 });
    const alice = await w.user('Alice');
    const bob = await w.user('Bob');
    for (let i = 0; i < 3; i++)
      expect(
        (await bob.call('POST', '/messages/send', {}, { recipient_pin: alice.pin, content: `hello ${i}` })).status,
      ).toBe(201);
    const first = await alice.call('GET', '/conversations');
    const tag = first.headers.get('etag')!;
    expect(first.status).toBe(200);
    expect(w.builds.conversations).toBe(1);
    const seen = await flood(200, () => alice.call('GET', '/conversations', { 'If-None-Match': tag }));
    expect(seen).toEqual({ 304: 50, 429: 150 });
    expect(w.builds.conversations).toBe(1);
    // the general budget is untouched by the 304s: other reads still work
    const me = await alice.call('GET', '/me');
    expect(me.status).toBe(200);
    expect(me.headers.get('ratelimit')).toMatch(/"general"; r=98;/);
    // a change that concerns her: a new body and tag, counted like a read
    await bob.call('POST', '/messages/send', {}, { recipient_pin: alice.pin, content: 'news' });
    const changed = await alice.call('GET', '/conversations', { 'If-None-Match': tag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(tag);
    expect(w.builds.conversations).toBe(2);
  });

  it('If-None-Match: * is counted against general like any read', async () => {
    const w = await world({ general: 40, conditional: 1000 });
    const alice = await w.user('Alice');
    const seen = await flood(100, () => alice.call('GET', '/conversations', { 'If-None-Match': '*' }));
    expect(seen).toEqual({ 304: 40, 429: 60 });
    expect(w.builds.conversations).toBe(40);
  });

  it('the validator moves with what the user sees, not with writes that do not concern her', async () => {
    const w = await world({ general: 1000, conditional: 1000 });
    const [alice, bob, carol, dan] = [
      await w.user('Alice'),
      await w.user('Bob'),
      await w.user('Carol'),
      await w.user('Dan'),
    ];
    await bob.call('POST', '/messages/send', {}, { recipient_pin: alice.pin, content: 'hi' });
    await carol.call('POST', '/messages/send', {}, { recipient_pin: dan.pin, content: 'first' });
    const group = (await (
      await alice.call('POST', '/conversations', {}, { participant_pins: [bob.pin, carol.pin], name: 'trio' })
    ).json()) as { id: string };
    const held = async () => (await alice.call('GET', '/conversations')).headers.get('etag')!;
    let tag = await held();
    const builds = w.builds.conversations;
    // Carol writes to Dan, in a conversation Alice is not in: Alice's 304 needs no build
    await carol.call('POST', '/messages/send', {}, { recipient_pin: dan.pin, content: 'not for Alice' });
    expect((await alice.call('GET', '/conversations', { 'If-None-Match': tag })).status).toBe(304);
    expect(w.builds.conversations).toBe(builds);
    // Carol writes in the group: Alice's list changed
    await carol.call('POST', `/conversations/${group.id}/messages`, {}, { content: 'to the trio' });
    const changed = await alice.call('GET', '/conversations', { 'If-None-Match': tag });
    expect(changed.status).toBe(200);
    tag = changed.headers.get('etag')!;
    // Carol leaves the group: gone from her list (the write no longer names her as a member)
    const carolTag = (await carol.call('GET', '/conversations')).headers.get('etag')!;
    expect((await carol.call('POST', `/conversations/${group.id}/leave`, {}, {})).status).toBe(200);
    const after = await carol.call('GET', '/conversations', { 'If-None-Match': carolTag });
    expect(after.status).toBe(200);
    expect(
      ((await after.json()) as { conversations: Array<{ id: string }> }).conversations.map((c) => c.id),
    ).not.toContain(group.id);
    // Alice's list shows the group's members: it changed too
    expect((await alice.call('GET', '/conversations', { 'If-None-Match': tag })).status).toBe(200);
  });

  it(
    'the collections whose writes move no validator are collections of the data ' +
      'directory (a renamed one would move them all)',
    () => {
      for (const name of UNSHOWN) expect(COLLECTIONS).toContain(name);
    },
  );
});
