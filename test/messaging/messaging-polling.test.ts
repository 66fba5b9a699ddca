import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import type { DomainEnv } from '../../src/domain/env.js';
import { ConversationActivity } from '../../src/domain/messaging/collections.js';
import { createGroup } from '../../src/domain/messaging/conversations.js';
import { listMessages } from '../../src/domain/messaging/messages.js';
import { sendToConversation } from '../../src/domain/messaging/send.js';
import { createUser, type User } from '../../src/domain/users/users.js';
import { configFrom } from '../../src/config/load.js';
import { FileStore } from '../../src/store/file/file-store.js';
import { MemoryStore } from '../../src/store/core/memory-store.js';
import type { Store } from '../../src/store/core/types.js';
import { tempDir, testApi, type TestApi } from '../helpers/api.js';

describe('polling with since while messages are written concurrently (HTTP, file store)', () => {
  let api: TestApi;
  let server: Server;
  let base: string;
  beforeAll(async () => {
    api = await testApi();
    server = api.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await api.close();
  });

  it('4 writers post 500 messages; a reader polling with since sees each exactly once, in order', async () => {
    const alice = await api.user('Alice');
    const bob = await api.user('Bob');
    const json = async (path: string, key: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      expect(res.status).toBeLessThan(300);
      return res.json() as Promise<any>;
    };
    const conv = await json('/conversations', alice.key, { participant_pin: bob.user.pin_code });
    const WRITERS = 4;
    const PER_WRITER = 125;
    let writing = WRITERS;
    // Writers also move the virtual clock, sometimes backwards: timestamps must still increase.
    let step = 0;
    const writer = async (w: number) => {
      for (let i = 0; i < PER_WRITER; i++) {
        step++;
        if (step % 7 === 0) api.clock.set(api.clock.now() + (step % 3) * 50 - 60);
        await json(`/conversations/${conv.id}/messages`, w % 2 ? alice.key : bob.key, { content: `w${w}-${i}` });
      }
      writing--;
    };
    const seen: Array<{ id: string; content: string; timestamp: number }> = [];
    const reader = async () => {
      let since = 0;
      let polls = 0;
      for (;;) {
        const done = writing === 0; // read before the poll: a poll after the last write sees it
        const limit = 1 + (polls++ % 17);
        const page = await json(`/conversations/${conv.id}/messages?since=${since}&limit=${limit}`, bob.key);
        seen.push(...page.messages);
        expect(page.timestamp).toBe(page.messages.length ? page.messages[page.messages.length - 1].timestamp : since);
        since = page.timestamp;
        if (done && !page.has_more) return polls;
      }
    };
    await Promise.all([reader(), ...Array.from({ length: WRITERS }, (_, w) => writer(w))]);
    expect(seen).toHaveLength(WRITERS * PER_WRITER);
    expect(new Set(seen.map((m) => m.id)).size).toBe(seen.length);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.timestamp).toBeGreaterThan(seen[i - 1]!.timestamp);
    // Each writer's own messages appear in the order it sent them.
    for (let w = 0; w < WRITERS; w++) {
      expect(seen.filter((m) => m.content.startsWith(`w${w}-`)).map((m) => m.content)).toEqual(
        Array.from({ length: PER_WRITER }, (_, i) => `w${w}-${i}`),
      );
    }
    // And the reader's order is the server's own order.
    const all: string[] = [];
    let since = 0;
    for (let more = true; more; ) {
      const page = await json(`/conversations/${conv.id}/messages?since=${since}&limit=200`, alice.key);
      all.push(...page.messages.map((m: { id: string }) => m.id));
      since = page.timestamp;
      more = page.has_more;
    }
    expect(seen.map((m) => m.id)).toEqual(all);
  });
});

/** Internal: a store with two users in a group, on a virtual clock. */
async function setup(store: Store, clock: VirtualClock) {
  const env: DomainEnv = { clock, config: configFrom({}) };
  const { a, b, convId } = await store.transaction((tx) => {
    const a = createUser(tx, env, { name: 'A' });
    const b = createUser(tx, env, { name: 'B' });
    return { a, b, convId: createGroup(tx, env, [a.id, b.id], 'g').id };
  });
  return { env, a, b, convId };
}

describe('since is a binary search over the conversation index (domain, property)', () => {
  it('any interleaving of writes, clock moves and polls: each message seen once, in timestamp order', async () => {
    type Op = { kind: 'write'; by: 0 | 1 } | { kind: 'clock'; delta: number } | { kind: 'poll'; limit: number };
    const op = fc.oneof(
      fc.record({ kind: fc.constant('write' as const), by: fc.constantFrom(0 as const, 1 as const) }),
      fc.record({ kind: fc.constant('clock' as const), delta: fc.integer({ min: -5_000, max: 5_000 }) }),
      fc.record({ kind: fc.constant('poll' as const), limit: fc.integer({ min: 1, max: 5 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 80 }), async (ops: Op[]) => {
        const clock = new VirtualClock(Date.parse('2026-11-21T12:00:00Z'));
        const store = new MemoryStore();
        const { env, a, b, convId } = await setup(store, clock);
        const users: User[] = [a, b];
        const written: string[] = [];
        const seen: string[] = [];
        let since = 0;
        const poll = (limit: number) => {
          const page = listMessages(store.read, convId, { since, limit });
          seen.push(...page.messages.map((m) => m.id));
          since = page.timestamp;
          return page.has_more;
        };
        for (const o of ops) {
          if (o.kind === 'write')
            written.push((await store.transaction((tx) => sendToConversation(tx, env, users[o.by]!, convId, 'x'))).id);
          else if (o.kind === 'clock') clock.set(clock.now() + o.delta);
          else poll(o.limit);
        }
        while (poll(5));
        expect(seen).toEqual(written);
      }),
      { numRuns: 200 },
    );
  });

  it(
    'a conversation survives a restart of the file store: same pages, and the next ' + 'timestamp still increases',
    async () => {
      const tmp = tempDir();
      try {
        const clock = new VirtualClock(Date.parse('2026-11-21T12:00:00Z'));
        let store: FileStore = await FileStore.open(tmp.dir);
        const { env, a, convId } = await setup(store, clock);
        for (let i = 0; i < 20; i++) await store.transaction((tx) => sendToConversation(tx, env, a, convId, `m${i}`));
        const before = listMessages(store.read, convId, { since: 0, limit: 200 });
        await store.close();
        store = await FileStore.open(tmp.dir);
        expect(listMessages(store.read, convId, { since: 0, limit: 200 })).toEqual(before);
        expect(listMessages(store.read, convId, { since: before.messages[9]!.timestamp, limit: 3 }).messages).toEqual(
          before.messages.slice(10, 13),
        );
        clock.set(clock.now() - 60_000);
        const next = await store.transaction((tx) => sendToConversation(tx, env, a, convId, 'after restart'));
        expect(next.timestamp).toBe(before.timestamp + 1);
        expect(store.read.col(ConversationActivity).get(convId)!.last_message_id).toBe(next.id);
        await store.close();
      } finally {
        tmp.cleanup();
      }
    },
  );
});
