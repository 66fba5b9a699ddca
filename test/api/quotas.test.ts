import { afterEach, describe, expect, it } from 'vitest';
import { Messages } from '../../src/domain/messaging/collections.js';
import { Usage } from '../../src/domain/quotas.js';
import { testApi, type TestApi } from '../helpers/api.js';

// Issue 30 item 11: within the rate limits one user could grow the store by ~13 kB a request,
// ~1.9 GB a day. Per-user quotas: refused with 400 quota_exceeded, nothing written.

let api: TestApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const quotaError = (
  res: { status: number; body: { error: { code: string; details?: Array<{ path: string }> } } },
  path: string,
) => {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('quota_exceeded');
  expect(res.body.error.details?.[0]?.path).toBe(path);
};

describe('per-user quotas (round 4)', () => {
  it(
    'bytes_per_user: messages, notes and introduction messages count; past it 400 ' +
      'quota_exceeded and nothing is written, money included',
    async () => {
      api = await testApi({ config: { quotas: { bytes_per_user: 65_536 } } });
      const alice = await api.user('Alice');
      const bob = await api.user('Bob');
      const carol = await api.user('Carol');
      const big = 'é'.repeat(4000); // 8,000 bytes: the largest message, in 2-byte characters
      for (let i = 0; i < 8; i++)
        expect(
          (
            await api.http
              .post('/api/v1/messages/send')
              .set(alice.headers)
              .send({ recipient_pin: bob.user.pin_code, content: big })
          ).status,
        ).toBe(201);
      const count = api.store.read.col(Messages).count();
      const refused = await api.http
        .post('/api/v1/messages/send')
        .set(alice.headers)
        .send({ recipient_pin: bob.user.pin_code, content: big });
      quotaError(refused, 'body.content');
      expect(refused.body.error.message).toContain('quotas.bytes_per_user');
      expect(api.store.read.col(Messages).count()).toBe(count);
      // a grant, then a note that does not fit: the transfer is refused whole, the balance untouched
      await api.store.transaction((tx) => tx.col(Usage).put({ id: alice.user.id, bytes: 65_000, groups: 0 }));
      const { grantMoney } = await import('../../src/domain/wallet/grants.js');
      await api.store.transaction((tx) => grantMoney(tx, api!.env, alice.user.id, 1000));
      const note = await api.http
        .post('/api/v1/wallet/send')
        .set(alice.headers)
        .send({ recipient_pin: bob.user.pin_code, amount: 5, note: 'é'.repeat(300) });
      expect(note.status).toBe(400); // 600 bytes over the 536 left
      quotaError(note, 'body.note');
      expect((await api.http.get('/api/v1/wallet/balance').set(alice.headers)).body.balance).toBe(10);
      const intro = await api.http
        .post('/api/v1/introductions')
        .set(alice.headers)
        .send({ participant_pins: [bob.user.pin_code, carol.user.pin_code], message: 'm'.repeat(1000) });
      quotaError(intro, 'body.message');
      expect((await api.http.get('/api/v1/introductions').set(alice.headers)).body.introductions).toEqual([]);
      // Bob's quota is his own
      expect(
        (
          await api.http
            .post('/api/v1/messages/send')
            .set(bob.headers)
            .send({ recipient_pin: alice.user.pin_code, content: big })
        ).status,
      ).toBe(201);
    },
  );

  it(
    'messages_per_conversation: the oldest leave, their bytes are given back, and a ' +
      'long conversation never gets stuck',
    async () => {
      api = await testApi({ config: { quotas: { messages_per_conversation: 100, bytes_per_user: 65_536 } } });
      const alice = await api.user('Alice');
      const bob = await api.user('Bob');
      const text = (i: number) => `${String(i).padStart(4, '0')} ${'x'.repeat(495)}`; // 500 bytes
      // 300 × 500 bytes = 150,000: more than the 65,536 a user may keep, unless old ones leave
      for (let i = 0; i < 300; i++)
        expect(
          (
            await api.http
              .post('/api/v1/messages/send')
              .set(alice.headers)
              .send({ recipient_pin: bob.user.pin_code, content: text(i) })
          ).status,
        ).toBe(201);
      const conv = (await api.http.get('/api/v1/conversations').set(bob.headers)).body.conversations[0];
      const page = await api.http.get(`/api/v1/conversations/${conv.id}/messages?limit=200&since=0`).set(bob.headers);
      expect(page.body.messages).toHaveLength(100);
      expect(page.body.messages[0].content).toBe(text(200));
      expect(page.body.messages[99].content).toBe(text(299));
      expect(api.store.read.col(Usage).get(alice.user.id)?.bytes).toBe(100 * 500);
    },
  );

  it('groups_per_user: past it 400 quota_exceeded, no group made', async () => {
    api = await testApi({ config: { quotas: { groups_per_user: 3 } } });
    const alice = await api.user('Alice');
    const bob = await api.user('Bob');
    for (let i = 0; i < 3; i++)
      expect(
        (
          await api.http
            .post('/api/v1/conversations')
            .set(alice.headers)
            .send({ participant_pins: [bob.user.pin_code], name: `g${i}` })
        ).status,
      ).toBe(201);
    const refused = await api.http
      .post('/api/v1/conversations')
      .set(alice.headers)
      .send({ participant_pins: [bob.user.pin_code], name: 'g3' });
    quotaError(refused, 'body.name');
    expect(refused.body.error.message).toContain('quotas.groups_per_user is 3');
    expect((await api.http.get('/api/v1/conversations').set(bob.headers)).body.conversations).toHaveLength(3);
    // a direct conversation is not a group
    expect(
      (
        await api.http
          .post('/api/v1/messages/send')
          .set(alice.headers)
          .send({ recipient_pin: bob.user.pin_code, content: 'hi' })
      ).status,
    ).toBe(201);
  });
});
