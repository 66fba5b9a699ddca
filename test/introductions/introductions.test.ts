import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApi, type TestApi } from '../helpers/api.js';
import { caller, socialState } from '../helpers/social.js';

type Who = Awaited<ReturnType<TestApi['user']>>;

/** The spec's section 3, "Introduction transitions", one test per row, plus API.md's refusals. */
describe('introductions: state table', () => {
  let api: TestApi;
  let call: ReturnType<typeof caller>;
  let alice: Who, bob: Who, carol: Who, dave: Who, eve: Who;
  beforeAll(async () => {
    api = await testApi({ memory: true });
    call = caller(api);
    [alice, bob, carol, dave, eve] = [
      await api.user('Alice'),
      await api.user('Bob'),
      await api.user('Carol'),
      await api.user('Dave'),
      await api.user('Eve'),
    ];
  });
  afterAll(() => api.close());

  const u = (w: Who) => ({ id: w.user.id, display_name: w.user.display_name, pin_code: w.user.pin_code });
  const introduce = async (by: Who, people: Who[], message?: string) => {
    const r = await call(by, 'post', '/introductions', {
      body: { participant_pins: people.map((p) => p.user.pin_code), ...(message !== undefined ? { message } : {}) },
    });
    expect(r.status).toBe(201);
    return r.body;
  };
  const pendingIds = async (who: Who) =>
    (await call(who, 'get', '/introductions/pending')).body.introductions.map((i: { id: string }) => i.id);
  const answer = (who: Who, id: string, what: 'accept' | 'decline') =>
    call(who, 'post', `/introductions/:id/${what}`, { params: { id } });

  it(
    '(none) → POST /introductions with two or more PINs → awaiting responses; ' +
      'recipients see it in /introductions/pending',
    async () => {
      const intro = await introduce(alice, [bob, carol], 'You both like chess');
      expect(intro).toEqual({
        id: expect.stringMatching(/^int_/),
        introducer: u(alice),
        participants: [
          { ...u(bob), response: 'pending' },
          { ...u(carol), response: 'pending' },
        ],
        message: 'You both like chess',
        status: 'pending',
        created_at: '2026-11-21T12:00:00.000Z',
      });
      expect('conversation_id' in intro).toBe(false);
      expect(await pendingIds(bob)).toContain(intro.id);
      expect(await pendingIds(carol)).toContain(intro.id);
      expect(await pendingIds(alice)).not.toContain(intro.id); // the introducer does not answer
      expect(await pendingIds(dave)).not.toContain(intro.id);
      for (const who of [alice, bob, carol]) {
        const list = (await call(who, 'get', '/introductions')).body.introductions;
        expect(list.find((i: { id: string }) => i.id === intro.id)).toEqual(intro);
      }
      expect(
        (await call(dave, 'get', '/introductions')).body.introductions.map((i: { id: string }) => i.id),
      ).not.toContain(intro.id);
      const noMessage = await introduce(alice, [bob, carol]);
      expect(noMessage.message).toBe('');
    },
  );

  it('awaiting → accept, not all have accepted → still awaiting; the caller’s acceptance is recorded', async () => {
    const intro = await introduce(alice, [bob, carol, dave]);
    const r = await answer(bob, intro.id, 'accept');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: intro.id, status: 'pending' });
    const seen = (await call(carol, 'get', '/introductions')).body.introductions.find(
      (i: { id: string }) => i.id === intro.id,
    );
    expect(seen.status).toBe('pending');
    expect(seen.participants.map((p: { response: string }) => p.response)).toEqual(['accepted', 'pending', 'pending']);
    expect('conversation_id' in seen).toBe(false);
    expect(await pendingIds(bob)).not.toContain(intro.id);
    expect(await pendingIds(carol)).toContain(intro.id);
  });

  it(
    'awaiting → accept, all have accepted (two people) → accepted; their direct ' +
      'conversation is created and its id returned',
    async () => {
      const intro = await introduce(alice, [bob, eve]);
      expect((await answer(eve, intro.id, 'accept')).body).toEqual({ id: intro.id, status: 'pending' });
      const last = await answer(bob, intro.id, 'accept');
      expect(last.body).toEqual({ id: intro.id, status: 'accepted', conversation_id: expect.stringMatching(/^cnv_/) });
      const conv = await call(bob, 'get', '/conversations/:id', { params: { id: last.body.conversation_id } });
      expect(conv.body).toMatchObject({
        type: 'direct',
        name: null,
        participants: [u(bob), u(eve)],
        last_message: null,
      });
      expect(
        (await call(alice, 'get', '/conversations/:id', { params: { id: last.body.conversation_id } })).status,
      ).toBe(404); // the introducer is not in it
      const listed = (await call(alice, 'get', '/introductions')).body.introductions.find(
        (i: { id: string }) => i.id === intro.id,
      );
      expect(listed).toMatchObject({ status: 'accepted', conversation_id: last.body.conversation_id });
      expect(listed.participants.map((p: { response: string }) => p.response)).toEqual(['accepted', 'accepted']);
      // The two can chat there, and a direct message between them lands in the same conversation.
      const m = await call(eve, 'post', '/messages/send', {
        body: { recipient_pin: bob.user.pin_code, content: 'hi Bob' },
      });
      expect(m.body.conversation_id).toBe(last.body.conversation_id);
    },
  );

  it(
    'awaiting → accept, all have accepted, two people who already talk → their existing ' +
      'direct conversation is reused',
    async () => {
      const dm = await call(carol, 'post', '/messages/send', {
        body: { recipient_pin: dave.user.pin_code, content: 'we met before' },
      });
      const intro = await introduce(eve, [dave, carol]);
      await answer(dave, intro.id, 'accept');
      const last = await answer(carol, intro.id, 'accept');
      expect(last.body.conversation_id).toBe(dm.body.conversation_id);
    },
  );

  it(
    'awaiting → accept, all have accepted (three people) → accepted; a group of the ' + 'participants is created',
    async () => {
      const intro = await introduce(alice, [bob, carol, dave]);
      await answer(carol, intro.id, 'accept');
      await answer(dave, intro.id, 'accept');
      const last = await answer(bob, intro.id, 'accept');
      expect(last.body.status).toBe('accepted');
      const conv = await call(dave, 'get', '/conversations/:id', { params: { id: last.body.conversation_id } });
      expect(conv.body).toMatchObject({
        type: 'group',
        name: 'Introduced by Alice',
        participants: [u(bob), u(carol), u(dave)],
      });
      const again = await introduce(alice, [bob, carol, dave]);
      for (const who of [bob, carol, dave]) await answer(who, again.id, 'accept');
      const second = (await call(alice, 'get', '/introductions')).body.introductions.find(
        (i: { id: string }) => i.id === again.id,
      );
      expect(second.conversation_id).not.toBe(last.body.conversation_id); // a group is never reused
    },
  );

  it('awaiting → decline → declined; the response carries status declined; one decline ends it', async () => {
    const intro = await introduce(alice, [bob, carol, dave]);
    await answer(bob, intro.id, 'accept');
    const before = socialState(api.store);
    const r = await answer(carol, intro.id, 'decline');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: intro.id, status: 'declined' });
    expect(socialState(api.store)).not.toBe(before);
    const seen = (await call(dave, 'get', '/introductions')).body.introductions.find(
      (i: { id: string }) => i.id === intro.id,
    );
    expect(seen.status).toBe('declined');
    expect(seen.participants.map((p: { response: string }) => p.response)).toEqual(['accepted', 'declined', 'pending']);
    expect('conversation_id' in seen).toBe(false);
    expect(await pendingIds(dave)).not.toContain(intro.id);
    // Dave, who never answered, can no longer accept or decline.
    const after = socialState(api.store);
    for (const what of ['accept', 'decline'] as const) {
      const late = await answer(dave, intro.id, what);
      expect(late.status).toBe(409);
      expect(late.body.error.code).toBe('introduction_not_pending');
    }
    expect(socialState(api.store)).toBe(after);
  });

  it('a second answer from the same participant is 409 introduction_not_pending and changes nothing', async () => {
    const intro = await introduce(alice, [bob, carol]);
    await answer(bob, intro.id, 'accept');
    const before = socialState(api.store);
    for (const what of ['accept', 'decline'] as const) {
      const r = await answer(bob, intro.id, what);
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe('introduction_not_pending');
    }
    expect(socialState(api.store)).toBe(before);
    // Also after it was accepted by all.
    await answer(carol, intro.id, 'accept');
    expect((await answer(carol, intro.id, 'decline')).status).toBe(409);
  });

  it('the introducer gets 403 forbidden; anyone else not a participant 404 introduction_not_found', async () => {
    const intro = await introduce(alice, [bob, carol]);
    const before = socialState(api.store);
    for (const what of ['accept', 'decline'] as const) {
      const own = await answer(alice, intro.id, what);
      expect(own.status).toBe(403);
      expect(own.body.error.code).toBe('forbidden');
      const stranger = await answer(eve, intro.id, what);
      expect(stranger.status).toBe(404);
      expect(stranger.body.error.code).toBe('introduction_not_found');
      const unknown = await answer(eve, 'int_0000000000000000000000', what);
      expect(unknown.body).toEqual(stranger.body); // a stranger cannot tell it exists
    }
    expect(socialState(api.store)).toBe(before);
  });

  it('GET /introductions is newest first', async () => {
    api.clock.set(api.clock.now() + 1000);
    const newer = await introduce(eve, [alice, bob]);
    const list = (await call(alice, 'get', '/introductions')).body.introductions;
    expect(list[0].id).toBe(newer.id);
    const times = list.map((i: { created_at: string }) => i.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    expect((await call(alice, 'get', '/introductions/pending')).body.introductions[0].id).toBe(newer.id);
  });
});
