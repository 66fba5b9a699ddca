import { describe, expect, it } from 'vitest';
import { ChangeCounters } from '../../src/api/reads/change-counters.js';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { configFrom } from '../../src/config/load.js';
import type { DomainEnv } from '../../src/domain/env.js';
import { createGroup, directConversation, leaveConversation } from '../../src/domain/messaging/conversations.js';
import { postMessage } from '../../src/domain/messaging/messages.js';
import { createUser } from '../../src/domain/users/users.js';
import { BotCursors } from '../../src/runtime/state/bot-records.js';
import { observeCommits } from '../../src/store/core/commit-signal.js';
import { MemoryStore } from '../../src/store/core/memory-store.js';

/** The per-user validators of conditional reads (issue 21 item 2), straight from the commit feed. */
async function setup() {
  const { store, commits } = observeCommits(new MemoryStore());
  const env: DomainEnv = { clock: new VirtualClock(Date.parse('2026-11-21T12:00:00Z')), config: configFrom({}) };
  const [alice, bob, carol] = await store.transaction((tx) =>
    ['Alice', 'Bob', 'Carol'].map((name) => createUser(tx, env, { name })),
  );
  const direct = await store.transaction((tx) => directConversation(tx, env, alice!.id, bob!.id).conversation);
  const counters = ChangeCounters.of(commits);
  const versions = () => [alice!, bob!, carol!].map((u) => counters.version(u.id));
  return { store, env, alice: alice!, bob: bob!, carol: carol!, direct, counters, versions };
}

describe('ChangeCounters', () => {
  it(
    'a message moves the counters of its conversation’s participants, once per commit, ' + 'and no one else’s',
    async () => {
      const { store, env, alice, direct, versions } = await setup();
      expect(versions()).toEqual(['0.0', '0.0', '0.0']);
      await store.transaction((tx) => postMessage(tx, env, direct, alice.id, 'hi'));
      expect(versions()).toEqual(['0.1', '0.1', '0.0']);
      await store.transaction((tx) => {
        postMessage(tx, env, direct, alice.id, 'one');
        postMessage(tx, env, direct, alice.id, 'two');
      });
      expect(versions()).toEqual(['0.2', '0.2', '0.0']);
    },
  );

  it(
    'writes no list shows move nothing; a new conversation, a user record or one who ' + 'left move the epoch',
    async () => {
      const { store, env, alice, bob, carol, versions } = await setup();
      await store.transaction((tx) => tx.col(BotCursors).insert({ id: 'cur_1', bot: 'b', source: 's', data: 1 }));
      expect(versions()).toEqual(['0.0', '0.0', '0.0']);
      const group = await store.transaction((tx) => createGroup(tx, env, [alice.id, bob.id, carol.id], 'g'));
      expect(versions()).toEqual(['1.0', '1.0', '1.0']);
      await store.transaction((tx) => postMessage(tx, env, group, carol.id, 'hello'));
      expect(versions()).toEqual(['1.1', '1.1', '1.1']);
      // Carol leaves: the conversation before the write names her, after it does not; both are told
      await store.transaction((tx) => leaveConversation(tx, carol, group.id));
      expect(versions()).toEqual(['1.2', '1.2', '1.2']);
      await store.transaction((tx) => createUser(tx, env, { name: 'Dan' }));
      expect(versions()).toEqual(['2.2', '2.2', '2.2']);
    },
  );

  it('a commit with any write it cannot place moves the epoch, not the counters', async () => {
    const { store, env, alice, direct, versions } = await setup();
    await store.transaction((tx) => {
      postMessage(tx, env, direct, alice.id, 'hi');
      createUser(tx, env, { name: 'Erin' });
    });
    expect(versions()).toEqual(['1.0', '1.0', '1.0']);
  });
});

describe('ChangeCounters, commits touching many users', () => {
  it(
    'a commit touching more users than its reused list keeps still moves each of them ' +
      'once, and the next commit is counted right',
    async () => {
      const { store, commits } = observeCommits(new MemoryStore());
      const env: DomainEnv = { clock: new VirtualClock(Date.parse('2026-11-21T12:00:00Z')), config: configFrom({}) };
      const users = await store.transaction((tx) =>
        Array.from({ length: 1200 }, (_, i) => createUser(tx, env, { name: `u${i}` })),
      );
      const group = await store.transaction((tx) =>
        createGroup(
          tx,
          env,
          users.map((u) => u.id),
          'everyone',
        ),
      );
      const counters = ChangeCounters.of(commits);
      await store.transaction((tx) => postMessage(tx, env, group, users[0]!.id, 'hello all'));
      expect(new Set(users.map((u) => counters.version(u.id)))).toEqual(new Set(['0.1']));
      const direct = await store.transaction(
        (tx) => directConversation(tx, env, users[1]!.id, users[2]!.id).conversation,
      );
      await store.transaction((tx) => postMessage(tx, env, direct, users[1]!.id, 'psst'));
      expect([0, 1, 2, 3].map((i) => counters.version(users[i]!.id))).toEqual(['1.1', '1.2', '1.2', '1.1']);
    },
  );
});
